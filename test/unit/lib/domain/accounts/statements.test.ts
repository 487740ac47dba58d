/**
 * The statements users sign (lib/domain/accounts/statements.ts): a key, KDF or invite statement that
 * verifies over its holder's fields, or the named refusal. Real keys and Ed25519 signatures.
 */
import { randomBytes } from "node:crypto";
import {
  checkInviteBinding,
  checkInviteStatement,
  checkKdfStatement,
  checkKeyStatement,
} from "../../../../../lib/domain/accounts/statements";
import {
  badBindingTag,
  badStatementSignature,
  badStatementVersion,
  bindingWithoutInvite,
} from "../../../../../lib/domain/accounts/refusals";
import type { InviteStatement } from "../../../../../protocol/formats/statements";
import { b64, newUserKeys, registrationBundle, type RegistrationBundle, type UserKeys } from "../../../../helpers/crypto";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { inviteStatementOf, kdfStatementOf, keyStatementOf, type StatementSigner } from "../../../../helpers/statements";

const userId = "0e3f4a1c-2b5d-4c6e-8f70-123456789abc";
const email = "ann@example.org";
let keys: UserKeys;
let other: UserKeys;
let bundle: RegistrationBundle;
let signer: StatementSigner;

beforeAll(async () => {
  [keys, other] = await Promise.all([newUserKeys(), newUserKeys()]);
  bundle = registrationBundle(keys);
  signer = { userId, email, keys, bundle };
});

const holder = () => ({ userId, email, publicKey: bundle.publicKey, signingPublicKey: bundle.signingPublicKey, kdf: bundle.kdf });

describe("checkKeyStatement", () => {
  test.each<[string, () => Parameters<typeof checkKeyStatement>, unknown]>([
    ["signed by the holder over their id, email and keys", () => [holder(), keyStatementOf(signer)], "ok"],
    [
      "a wrong version under another field: the refusal names that field",
      () => [holder(), { ...keyStatementOf(signer), version: 2 }, "statements.key"],
      asRefusal(badStatementVersion("The key statement", 1, "statements.key")),
    ],
    [
      "a version other than this release's",
      () => [holder(), { ...keyStatementOf(signer), version: 2 }],
      asRefusal(badStatementVersion("The key statement", 1, "keyStatement")),
    ],
    [
      "made for another email",
      () => [holder(), keyStatementOf({ ...signer, email: "bob@example.org" })],
      asRefusal(badStatementSignature("The key statement", "keyStatement")),
    ],
    [
      "signed by another key",
      () => [holder(), keyStatementOf({ ...signer, keys: other })],
      asRefusal(badStatementSignature("The key statement", "keyStatement")),
    ],
  ])("%s", (_what, args, expected) => {
    const call = args();
    expect(outcomeOf(() => checkKeyStatement(...call))).toEqual(expected);
  });
});

describe("checkKdfStatement", () => {
  test.each<[string, () => Parameters<typeof checkKdfStatement>, unknown]>([
    ["signed by the holder over their KDF", () => [holder(), kdfStatementOf(signer)], "ok"],
    [
      "a version other than this release's",
      () => [holder(), { ...kdfStatementOf(signer), version: 0 }],
      asRefusal(badStatementVersion("The KDF statement", 1, "kdfStatement")),
    ],
    [
      "made for other KDF parameters",
      () => [{ ...holder(), kdf: { ...bundle.kdf, iterations: 700_000 } }, kdfStatementOf(signer)],
      asRefusal(badStatementSignature("The KDF statement", "kdfStatement")),
    ],
  ])("%s", (_what, args, expected) => {
    const call = args();
    expect(outcomeOf(() => checkKdfStatement(...call))).toEqual(expected);
  });
});

describe("checkInviteStatement", () => {
  const invite: InviteStatement = {
    inviteId: "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    orgId: "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
    orgName: "Acme",
    email: "bob@example.org",
    role: "member",
    expiresAt: "2030-01-01T00:00:00.000Z",
    inviterId: userId,
  };
  test.each<[string, () => Parameters<typeof checkInviteStatement>, unknown]>([
    ["signed by the inviter over the invite", () => [invite, bundle.signingPublicKey, inviteStatementOf(signer, invite)], "ok"],
    [
      "a version other than this release's",
      () => [invite, bundle.signingPublicKey, { ...inviteStatementOf(signer, invite), version: 2 }],
      asRefusal(badStatementVersion("The invite statement", 1, "statement")),
    ],
    [
      "signed for another role",
      () => [invite, bundle.signingPublicKey, inviteStatementOf(signer, { ...invite, role: "admin" })],
      asRefusal(badStatementSignature("The invite statement", "statement")),
    ],
  ])("%s", (_what, args, expected) => {
    const call = args();
    expect(outcomeOf(() => checkInviteStatement(...call))).toEqual(expected);
  });
});

test.each<[string, string, boolean, unknown]>([
  ["a 32-byte tag with an invite", b64(randomBytes(32)), true, "ok"],
  ["a tag without an invite", b64(randomBytes(32)), false, asRefusal(bindingWithoutInvite())],
  ["a tag of 16 bytes", b64(randomBytes(16)), true, asRefusal(badBindingTag())],
])("checkInviteBinding: %s", (_what, mac, withInvite, expected) => {
  expect(outcomeOf(() => checkInviteBinding(mac, withInvite))).toEqual(expected);
});
