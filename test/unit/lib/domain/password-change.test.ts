/** The master password change's rules (lib/domain/password-change.ts), as tables: a state and a request in, accepted or the named refusal out. */
import type { UserId, VaultId } from "../../../../lib/domain/ids";
import {
  decideAccountVersion,
  decidePasswordChange,
  decidePersonalVaultCount,
  decideWrapVersion,
  MAX_PERSONAL_VAULTS,
  type PasswordChange,
} from "../../../../lib/domain/password-change";
import type { VaultSnapshot } from "../../../../lib/domain/vault-decisions";
import { code } from "../../../helpers/refusal";

const ada = "u-ada" as UserId;
const change = (vaults: VaultId[], accountVersion = 1): PasswordChange => ({
  accountVersion,
  kdf: { algorithm: "pbkdf2-sha256", salt: "c2FsdA==", iterations: 600_000 },
  kdfStatement: { version: 2, signature: "" },
  vaults: vaults.map((vaultId) => ({ vaultId, keyVersion: 1, encryptedVaultKey: "", wrapSignature: "" })),
});
const personal = (vaultId: string) => ({ vault: { vaultId, type: "personal" } }) as unknown as VaultSnapshot;

test.each<[string, () => void, string]>([
  ["the version the client read is the account's", () => decideAccountVersion(3, 3), "ok"],
  ["another change came first", () => decideAccountVersion(4, 3), "CONFLICT"],
  ["a personal wrap under the current version", () => decideWrapVersion(2, 2), "ok"],
  ["a personal wrap under an older version", () => decideWrapVersion(2, 1), "CONFLICT"],
  ["a personal wrap stating no version (a client of an earlier release)", () => decideWrapVersion(2, undefined), "ok"],
  ["a new personal vault below the cap", () => decidePersonalVaultCount(MAX_PERSONAL_VAULTS - 1), "ok"],
  ["a new personal vault at the cap", () => decidePersonalVaultCount(MAX_PERSONAL_VAULTS), "INVALID"],
  [
    "an account without personal vaults re-wraps none",
    () => void decidePasswordChange({ userId: ada, accountVersion: 1 }, [], change([])),
    "ok",
  ],
  [
    "a personal vault left out",
    () => void decidePasswordChange({ userId: ada, accountVersion: 1 }, [personal("v1")], change([])),
    "CONFLICT",
  ],
  [
    "a vault that is not one of them",
    () => void decidePasswordChange({ userId: ada, accountVersion: 1 }, [], change(["v9" as VaultId])),
    "CONFLICT",
  ],
  [
    "a stale version, whatever the vaults",
    () => void decidePasswordChange({ userId: ada, accountVersion: 2 }, [], change([], 1)),
    "CONFLICT",
  ],
])("%s", (_what, decide, expected) => {
  expect(code(decide)).toBe(expected);
});
