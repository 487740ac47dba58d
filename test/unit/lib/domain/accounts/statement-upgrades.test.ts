/** A statements upgrade (lib/domain/accounts/statement-upgrades.ts), as a table: kept, or the named refusal. */
import { userIdForKey } from "../../../../../lib/domain/ids";
import { badStatementSignature, noStatementGiven } from "../../../../../lib/domain/accounts/refusals";
import { decideStatementUpgrade, type StatementUpgrade } from "../../../../../lib/domain/accounts/statement-upgrades";
import { newUserKeys, registrationBundle, type UserKeys } from "../../../../helpers/crypto";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { kdfStatementOf, keyStatementOf } from "../../../../helpers/statements";

describe("decideStatementUpgrade", () => {
  let keys: UserKeys;
  let other: UserKeys;
  beforeAll(async () => {
    [keys, other] = await Promise.all([newUserKeys({ rsaBits: 1024 }), newUserKeys({ rsaBits: 1024 })]);
  });
  const email = "ada@example.test";
  const userOf = (k: UserKeys) => {
    const bundle = registrationBundle(k);
    return { userId: userIdForKey(bundle.signingPublicKey), email, ...bundle, kdf: k.kdf };
  };
  const signer = (k: UserKeys, as: UserKeys = k) => {
    const bundle = registrationBundle(as);
    return { userId: userIdForKey(bundle.signingPublicKey), email, keys: k, bundle: { ...bundle, kdf: as.kdf } };
  };

  test.each<[string, (k: UserKeys, o: UserKeys) => StatementUpgrade, (() => unknown) | "ok"]>([
    ["neither statement", () => ({}), () => asRefusal(noStatementGiven())],
    ["a key statement", (k) => ({ keyStatement: keyStatementOf(signer(k)) }), "ok"],
    ["a KDF statement", (k) => ({ kdfStatement: kdfStatementOf(signer(k)) }), "ok"],
    ["both", (k) => ({ keyStatement: keyStatementOf(signer(k)), kdfStatement: kdfStatementOf(signer(k)) }), "ok"],
    [
      "a key statement signed by another key",
      (k, o) => ({ keyStatement: keyStatementOf(signer(o, k)) }),
      () => asRefusal(badStatementSignature("The key statement", "keyStatement")),
    ],
    [
      "a good key statement, a KDF statement signed by another key",
      (k, o) => ({ keyStatement: keyStatementOf(signer(k)), kdfStatement: kdfStatementOf(signer(o, k)) }),
      () => asRefusal(badStatementSignature("The KDF statement", "kdfStatement")),
    ],
  ])("%s", (_what, given, expected) => {
    const outcome = outcomeOf(() => decideStatementUpgrade(userOf(keys), given(keys, other)));
    expect(outcome).toEqual(expected === "ok" ? "ok" : expected());
  });
});
