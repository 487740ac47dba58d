/** A key rotation's rules (lib/domain/accounts/key-rotation.ts), as tables: a state and a request in, accepted or the named refusal (with its field) out, on the key-log test vectors. */
import { createPrivateKey, sign } from "node:crypto";
import vectors from "../../../../../protocol/vectors/key-log-vectors.json";
import type { UserId, VaultId } from "../../../../../lib/domain/ids";
import { AppError } from "../../../../../lib/errors";
import {
  checkKeyRotationForm,
  decideKeyRotation,
  decideWrapStillSigned,
  keyLogHead,
  type KeyRotation,
} from "../../../../../lib/domain/accounts/key-rotation";
import type { VaultSnapshot } from "../../../../../lib/domain/vaults/decisions";
import { keyFingerprint as serverFingerprint } from "../../../../../lib/domain/vaults/roster";
import { kdfStatementBytes, keyStatementBytes } from "../../../../../protocol/formats/statements";
import type { KeyLogEntry } from "../../../../../protocol/formats/key-log";
import {
  badStatementSignature,
  badStatementVersion,
  keyLogEntryStale,
  keyLogStepRefused,
  keysRotatedMeanwhile,
  keysUsedBefore,
  resignedWrapsMismatch,
  rotationKeysMismatch,
  rotationVaultNamedTwice,
  rotationVaultsChanged,
  staleAccountVersion,
} from "../../../../../lib/domain/accounts/refusals";
import { badWrapSignature, keyVersionMismatch } from "../../../../../lib/domain/vaults/refusals";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const PKCS8_PREFIX = "302e020100300506032b657004220420";
const nodeKey = (seedHex: string) => createPrivateKey({ key: Buffer.from(PKCS8_PREFIX + seedHex, "hex"), format: "der", type: "pkcs8" });
const [v1, v2] = vectors.entries.map((e) => e.entry as KeyLogEntry) as [KeyLogEntry, KeyLogEntry];
const [seed1, seed2] = vectors.signingSeedsHex as [string, string];
const userId = v1.userId;

describe("the server's rotation rules", () => {
  const account = {
    userId: userId as UserId,
    email: "ada@example.test",
    publicKey: v1.publicKey,
    signingPublicKey: v1.signingPublicKey,
    publicKeySignature: v1.publicKeySignature,
    kdf: { algorithm: "pbkdf2-sha256" as const, salt: "c2FsdHNhbHRzYWx0c2FsdA==", iterations: 600_000 },
    accountVersion: 1,
    kdfStatement: { version: 1, signature: "" },
  };
  const newKeys = serverFingerprint(v2);
  const signBy = (seed: string, bytes: Uint8Array) => sign(null, bytes, nodeKey(seed)).toString("base64");
  const request = (over: Partial<KeyRotation> = {}): Omit<KeyRotation, "keyLogEntry"> & { keyLogEntry: unknown } => ({
    accountVersion: 1,
    keyLogEntry: v2,
    encryptedPrivateKey: Buffer.alloc(1200, 1).toString("base64"),
    encryptedSigningPrivateKey: Buffer.alloc(80, 2).toString("base64"),
    keyStatement: { version: 2, signature: signBy(seed2, keyStatementBytes({ userId, email: account.email, keys: newKeys, version: 2 })) },
    kdfStatement: {
      version: 1,
      signature: signBy(seed2, kdfStatementBytes({ userId, email: account.email, kdf: account.kdf, version: 1 })),
    },
    vaults: [],
    ...over,
  });
  const refusal = (fn: () => unknown): string => {
    try {
      fn();
      return "ok";
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return `${err.type} ${(err.data as { field?: string } | undefined)?.field ?? ""}`.trim();
    }
  };
  const head = keyLogHead(account, []);
  /** A row's outcome: a named refusal compared with its constructor (code, message, field); a string for an unnamed one. */
  const expectOutcome = (fn: () => unknown, outcome: string | AppError) =>
    typeof outcome === "string" ? expect(refusal(fn)).toBe(outcome) : expect(outcomeOf(fn)).toEqual(asRefusal(outcome));

  test.each<[string, () => unknown, string | AppError]>([
    ["the vectors' rotation, from the registered keys", () => checkKeyRotationForm(account, head, request()), "ok"],
    [
      "entry 1 offered as a rotation",
      () => checkKeyRotationForm(account, head, request({ keyLogEntry: v1 })),
      "INVALID keyLogEntry.version",
    ],
    [
      "a step after another head (another rotation came first)",
      () => checkKeyRotationForm(account, keyLogHead(account, [v1, v2]), request()),
      keyLogEntryStale(2),
    ],
    [
      "a step the current key did not sign",
      () => checkKeyRotationForm(account, head, request({ keyLogEntry: { ...v2, sig: v2.selfSig! } })),
      keyLogStepRefused("sig", "the step is not signed by the account's current signing key"),
    ],
    [
      "a step its new key did not sign",
      () => checkKeyRotationForm(account, head, request({ keyLogEntry: { ...v2, selfSig: v2.sig! } })),
      keyLogStepRefused("selfSig", "the step is not signed by its own new signing key"),
    ],
    [
      "another user's step",
      () => checkKeyRotationForm({ ...account, userId: "u-bob" as UserId }, head, request()),
      rotationKeysMismatch("userId"),
    ],
    [
      "a key statement for another version",
      () => checkKeyRotationForm(account, head, request({ keyStatement: { ...request().keyStatement, version: 1 } })),
      badStatementVersion("The key statement", 2, "keyStatement"),
    ],
    [
      "a KDF statement signed by the old key",
      () =>
        checkKeyRotationForm(
          account,
          head,
          request({
            kdfStatement: {
              version: 1,
              signature: signBy(seed1, kdfStatementBytes({ userId, email: account.email, kdf: account.kdf, version: 1 })),
            },
          }),
        ),
      badStatementSignature("The KDF statement", "kdfStatement"),
    ],
    [
      "keys this account had before (a head that already holds them)",
      () => checkKeyRotationForm(account, { ...head, keys: new Set([...head.keys, serverFingerprint(v2)]) }, request()),
      keysUsedBefore(),
    ],
    [
      "a vault named twice",
      () => checkKeyRotationForm(account, head, request({ vaults: rotation(["v1", "v1"]).vaults })),
      rotationVaultNamedTwice(),
    ],
  ])("%s", (_what, fn, outcome) => {
    expectOutcome(fn, outcome);
  });

  // A personal vault without a roster: its 40-byte wrap, signed by the new key.
  const wrap = Buffer.alloc(40, 7);
  const personal = (vaultId: string) =>
    ({
      snapshot: {
        vault: { vaultId, type: "personal", keyVersion: 1, roster: null },
        members: [{ userId, role: "owner", publicKey: v1.publicKey, signingPublicKey: v1.signingPublicKey }],
      } as unknown as VaultSnapshot,
      sentWraps: [{ userId: userId as UserId, encryptedVaultKey: wrap.toString("base64") }],
    }) as const;
  const rotation = (vaultIds: string[], over: Partial<KeyRotation> = {}): KeyRotation => ({
    ...(request() as KeyRotation),
    vaults: vaultIds.map((vaultId) => ({
      vaultId: vaultId as VaultId,
      keyVersion: 1,
      encryptedVaultKey: wrap.toString("base64"),
      wrapSignature: signBy(seed2, wrap),
      resigned: [],
    })),
    ...over,
  });
  test.each<[string, () => unknown, string | AppError]>([
    [
      "every vault, each wrapped and signed by the new key",
      () => decideKeyRotation(account, [personal("v1"), personal("v2")], rotation(["v1", "v2"])),
      "ok",
    ],
    ["a vault left out", () => decideKeyRotation(account, [personal("v1"), personal("v2")], rotation(["v1"])), rotationVaultsChanged(1, 0)],
    ["a vault not theirs", () => decideKeyRotation(account, [personal("v1")], rotation(["v1", "v9"])), rotationVaultsChanged(0, 1)],
    [
      "from an older read of the account",
      () => decideKeyRotation({ ...account, accountVersion: 2 }, [personal("v1")], rotation(["v1"])),
      staleAccountVersion(2, 1),
    ],
    [
      "a wrap signed by the old key",
      () =>
        decideKeyRotation(account, [personal("v1")], {
          ...rotation(["v1"]),
          vaults: [{ ...rotation(["v1"]).vaults[0]!, wrapSignature: signBy(seed1, wrap) }],
        }),
      badWrapSignature(),
    ],
    [
      "a wrap of another key version (a rekey came first)",
      () =>
        decideKeyRotation(account, [personal("v1")], { ...rotation(["v1"]), vaults: [{ ...rotation(["v1"]).vaults[0]!, keyVersion: 2 }] }),
      keyVersionMismatch(1, 2),
    ],
    [
      "a wrap made for someone else re-signed that they do not hold",
      () =>
        decideKeyRotation(account, [personal("v1")], {
          ...rotation(["v1"]),
          vaults: [{ ...rotation(["v1"]).vaults[0]!, resigned: [{ userId: "u-bob" as UserId, wrapSignature: signBy(seed2, wrap) }] }],
        }),
      resignedWrapsMismatch("v1"),
    ],
    [
      "a new vault's wrap still signed by the owner's key",
      () => decideWrapStillSigned(v1.signingPublicKey, { encryptedVaultKey: wrap.toString("base64"), wrapSignature: signBy(seed1, wrap) }),
      "ok",
    ],
    [
      "a new vault's wrap signed by keys the owner rotated away from",
      () => decideWrapStillSigned(v2.signingPublicKey, { encryptedVaultKey: wrap.toString("base64"), wrapSignature: signBy(seed1, wrap) }),
      keysRotatedMeanwhile(),
    ],
  ])("%s", (_what, fn, outcome) => {
    expectOutcome(fn, outcome);
  });
});
