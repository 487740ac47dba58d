/** The master password change's rules (lib/domain/accounts/password-change.ts), as tables: a state and a request in, accepted or the named refusal out. */
import type { UserId, VaultId } from "../../../../../lib/domain/ids";
import {
  checkPasswordChangeForm,
  decideAccountVersion,
  decidePasswordChange,
  decidePersonalVaultCount,
  decideWrapVersion,
  MAX_PERSONAL_VAULTS,
  type PasswordChange,
} from "../../../../../lib/domain/accounts/password-change";
import type { VaultSnapshot } from "../../../../../lib/domain/vaults/decisions";
import {
  personalVaultsChanged,
  staleAccountVersion,
  tooManyPersonalVaults,
  vaultNamedTwice,
  wrapUnderOldPassword,
} from "../../../../../lib/domain/accounts/refusals";
import type { AppError } from "../../../../../lib/errors";
import { newUserKeys, registrationBundle, type UserKeys } from "../../../../helpers/crypto";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { kdfStatementOf } from "../../../../helpers/statements";

const ada = "u-ada" as UserId;
const change = (vaults: VaultId[], accountVersion = 1): PasswordChange => ({
  accountVersion,
  kdf: { algorithm: "pbkdf2-sha256", salt: "c2FsdA==", iterations: 600_000 },
  kdfStatement: { version: 2, signature: "" },
  vaults: vaults.map((vaultId) => ({ vaultId, keyVersion: 1, encryptedVaultKey: "", wrapSignature: "" })),
});
const personal = (vaultId: string) => ({ vault: { vaultId, type: "personal" } }) as unknown as VaultSnapshot;

test.each<[string, () => void, "ok" | AppError]>([
  ["the version the client read is the account's", () => decideAccountVersion(3, 3), "ok"],
  ["another change came first", () => decideAccountVersion(4, 3), staleAccountVersion(4, 3)],
  ["a personal wrap under the current version", () => decideWrapVersion(2, 2), "ok"],
  ["a personal wrap under an older version", () => decideWrapVersion(2, 1), wrapUnderOldPassword(2, 1)],
  ["a personal wrap stating no version (a client of an earlier release)", () => decideWrapVersion(2, undefined), "ok"],
  ["a new personal vault below the cap", () => decidePersonalVaultCount(MAX_PERSONAL_VAULTS - 1), "ok"],
  ["a new personal vault at the cap", () => decidePersonalVaultCount(MAX_PERSONAL_VAULTS), tooManyPersonalVaults(MAX_PERSONAL_VAULTS)],
  [
    "an account without personal vaults re-wraps none",
    () => void decidePasswordChange({ userId: ada, accountVersion: 1 }, [], change([])),
    "ok",
  ],
  [
    "a personal vault left out",
    () => void decidePasswordChange({ userId: ada, accountVersion: 1 }, [personal("v1")], change([])),
    personalVaultsChanged(1, 0),
  ],
  [
    "a vault that is not one of them",
    () => void decidePasswordChange({ userId: ada, accountVersion: 1 }, [], change(["v9" as VaultId])),
    personalVaultsChanged(0, 1),
  ],
  [
    "a stale version, whatever the vaults",
    () => void decidePasswordChange({ userId: ada, accountVersion: 2 }, [], change([], 1)),
    staleAccountVersion(2, 1),
  ],
])("%s", (_what, decide, expected) => {
  expect(outcomeOf(decide)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

describe("checkPasswordChangeForm: the request's form, before anything is locked", () => {
  let keys: UserKeys;
  beforeAll(async () => {
    keys = await newUserKeys();
  });
  const form = (vaults: VaultId[]) => {
    const bundle = registrationBundle(keys);
    const account = {
      userId: ada,
      email: "ada@example.test",
      publicKey: bundle.publicKey,
      signingPublicKey: bundle.signingPublicKey,
      accountVersion: 1,
    };
    const kdfStatement = kdfStatementOf({ userId: ada, email: account.email, keys, bundle });
    return () => checkPasswordChangeForm(account, { ...change(vaults), kdf: bundle.kdf, kdfStatement });
  };

  test.each<[string, VaultId[], "ok" | AppError]>([
    ["each personal vault named once", ["v1" as VaultId, "v2" as VaultId], "ok"],
    ["a personal vault named twice", ["v1" as VaultId, "v2" as VaultId, "v1" as VaultId], vaultNamedTwice()],
  ])("%s", (_what, vaults, expected) => {
    expect(outcomeOf(form(vaults))).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
  });
});
