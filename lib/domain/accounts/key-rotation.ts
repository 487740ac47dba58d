/**
 * A key rotation: a user replaces their RSA and Ed25519 keys. The client sends the new
 * public keys as the next entry of their key log (protocol/formats/key-log.ts: signed by the key it replaces and
 * by the new one), the new private keys sealed under the same stretched key, a key statement and a
 * KDF statement signed by the new key, and, for every vault the user is a member of, the vault key
 * wrapped to the new key (with its `rotate` roster link, signed by the old key) and the wraps the
 * user made for others signed again with the new key. The store applies it in one transaction,
 * under a compare-and-swap on the account's version and the log's head, with the vault set exactly
 * the user's (as a rekey's member set is exactly the vault's): a vault left out would be left
 * wrapped to a key that is gone.
 */
import type { UserId, VaultId } from "../ids";
import { checkKeyBundle, checkWrap, signatureVerifies } from "./keys";
import {
  keyLogEntryStale,
  keyLogStepRefused,
  keysRotatedMeanwhile,
  keysUsedBefore,
  rotationKeysMismatch,
  rotationVaultNamedTwice,
  rotationVaultsChanged,
  resignedWrapsMismatch,
} from "./refusals";
import { keyFingerprint, ROSTER_LINK_FIELD, sha256Hex, type RosterEntry, type RosterLink } from "../vaults/roster";
import { checkKdfStatement, checkKeyStatement, kdfVersionOf } from "./statements";
import type { Kdf, SignedStatement } from "../types";
import { decideAccountVersion } from "./password-change";
import { assertKeyVersion } from "../vaults/rekey";
import { requireMember, rosterStep, type VaultSnapshot } from "../vaults/decisions";
import { AppError, invalid, type ErrorCode } from "../../errors";
import { RosterLinkError } from "../../../protocol/formats/links";
import {
  genesisEntry,
  keyLogEntryBytes,
  keyLogSigningBytes,
  parseKeyLogEntry,
  MAX_KEY_VERSIONS,
  type KeyLogEntry,
} from "../../../protocol/formats/key-log";

export { MAX_KEY_VERSIONS, genesisEntry };
export type { KeyLogEntry };

/**
 * The most vaults one rotation names: every vault the user is in travels in one request, which the
 * gateway's 1 MiB body bounds first (about 400 shared vaults with a few members each, README).
 */
export const MAX_ROTATION_VAULTS = 5_000;

/** The request field that carries the new entry. */
export const KEY_LOG_FIELD = "keyLogEntry";

/** One vault's part of a rotation. */
export interface VaultRotation {
  vaultId: VaultId;
  /** The vault key version the client wrapped: the vault's current one, else 409. */
  keyVersion: number;
  /** The vault key wrapped to the new keys (RSA-OAEP; AES-KW under the same stretched key for a personal vault). */
  encryptedVaultKey: string;
  /** By the new signing key over the wrap. */
  wrapSignature: string;
  /** The `rotate` link, signed by the old key, on a vault with a signed roster. */
  rosterLink?: RosterLink;
  /** The wraps this user made for others in the vault, each signed again with the new key: exactly those. */
  resigned: Array<{ userId: UserId; wrapSignature: string }>;
}

export interface KeyRotation {
  accountVersion: number;
  keyLogEntry: KeyLogEntry;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
  keyStatement: SignedStatement;
  kdfStatement: SignedStatement;
  vaults: VaultRotation[];
}

/** What the rule needs of the account as it is before the rotation. */
export interface RotatingAccount {
  userId: UserId;
  email: string;
  publicKey: string;
  signingPublicKey: string;
  publicKeySignature: string;
  kdf: Kdf;
  accountVersion: number;
  kdfStatement?: SignedStatement;
}

/** The head of the user's key log as stored: its last entry (entry 1, made from the account's keys, when nothing was stored). */
export function keyLogHead(
  account: RotatingAccount,
  stored: readonly KeyLogEntry[],
): { entry: KeyLogEntry; hash: string; keys: Set<string> } {
  const entries = stored.length > 0 ? stored : [genesisEntry(account.userId, account)];
  const entry = entries[entries.length - 1]!;
  return { entry, hash: sha256Hex(keyLogEntryBytes(entry)), keys: new Set(entries.map((e) => keyFingerprint(e))) };
}

function asInvalid<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof RosterLinkError) throw invalid(`Key log entry: ${err.message}`, `${KEY_LOG_FIELD}.${err.field}`);
    throw err;
  }
}

/**
 * The request's form and its key-log step, before any vault is locked: the new bundle a registration
 * would take, the entry exactly these keys, the next version after the stored head with `prev` its
 * hash, signed by the current key and by the new one, keys never used before by this account, and
 * the statements signed by the new key (the key statement at the entry's version, the KDF statement
 * over the account's unchanged parameters at its current version). Returns the entry.
 */
export function checkKeyRotationForm(
  account: RotatingAccount,
  head: ReturnType<typeof keyLogHead>,
  raw: Omit<KeyRotation, "keyLogEntry"> & { keyLogEntry: unknown },
): KeyLogEntry {
  const entry = asInvalid(() => parseKeyLogEntry(raw.keyLogEntry));
  if (entry.version === 1) throw invalid("Key log entry: a rotation adds version 2 or later", `${KEY_LOG_FIELD}.version`);
  checkKeyBundle({ ...entry, encryptedPrivateKey: raw.encryptedPrivateKey, encryptedSigningPrivateKey: raw.encryptedSigningPrivateKey });
  if (entry.userId !== account.userId) throw rotationKeysMismatch("userId");
  if (entry.version !== head.entry.version + 1 || entry.prev !== head.hash) throw keyLogEntryStale(head.entry.version);
  if (entry.version > MAX_KEY_VERSIONS) throw keyLogStepRefused("version", `an account has at most ${MAX_KEY_VERSIONS} key versions`);
  if (head.keys.has(keyFingerprint(entry))) throw keysUsedBefore();
  const bytes = Buffer.from(keyLogSigningBytes(entry));
  if (!signatureVerifies(bytes, Buffer.from(entry.sig!, "base64"), head.entry.signingPublicKey))
    throw keyLogStepRefused("sig", "the step is not signed by the account's current signing key");
  if (!signatureVerifies(bytes, Buffer.from(entry.selfSig!, "base64"), entry.signingPublicKey))
    throw keyLogStepRefused("selfSig", "the step is not signed by its own new signing key");
  const next = { userId: account.userId, email: account.email, publicKey: entry.publicKey, signingPublicKey: entry.signingPublicKey };
  checkKeyStatement(next, raw.keyStatement, "keyStatement", entry.version);
  // The same parameters at the same version, now signed by the new key: a rotation does not show in prelogin's answer.
  checkKdfStatement({ ...next, kdf: account.kdf }, raw.kdfStatement, "kdfStatement", kdfVersionOf(account));
  if (new Set(raw.vaults.map((v) => v.vaultId)).size !== raw.vaults.length) throw rotationVaultNamedTwice();
  return entry;
}

/** A vault as the rotation locks it: the snapshot, and the wraps the rotating user made for others (by the stored bytes). */
export interface HeldVault {
  snapshot: VaultSnapshot;
  sentWraps: ReadonlyArray<{ userId: UserId; encryptedVaultKey: string }>;
}

/**
 * Under the locks: the account version is the one the client read; the vaults are exactly the
 * user's (as locked); in each, the new wrap is whole for the new keys, of the vault's current key
 * version, and its `rotate` link follows the roster, signed with the old key; the wraps the user
 * made for others are exactly re-signed, each signature verifying with the new key over the stored
 * bytes. Returns the roster links to store, by vault.
 */
export function decideKeyRotation(
  account: Pick<RotatingAccount, "userId" | "accountVersion">,
  held: readonly HeldVault[],
  rotation: KeyRotation,
): Map<VaultId, RosterEntry | undefined> {
  decideAccountVersion(account.accountVersion, rotation.accountVersion);
  const byId = new Map(held.map((h) => [h.snapshot.vault.vaultId, h]));
  const missing = [...byId.keys()].filter((id) => !rotation.vaults.some((v) => v.vaultId === id)).length;
  const extra = rotation.vaults.filter((v) => !byId.has(v.vaultId)).length;
  if (missing > 0 || extra > 0) throw rotationVaultsChanged(missing, extra);
  const entry = rotation.keyLogEntry;
  const newKeys = { publicKey: entry.publicKey, signingPublicKey: entry.signingPublicKey };
  const out = new Map<VaultId, RosterEntry | undefined>();
  for (const [i, v] of rotation.vaults.entries()) {
    const { snapshot, sentWraps } = byId.get(v.vaultId)!;
    const actor = requireMember(snapshot, account.userId);
    checkWrap({
      vaultType: snapshot.vault.type,
      encryptedVaultKey: v.encryptedVaultKey,
      wrapSignature: v.wrapSignature,
      holderPublicKey: newKeys.publicKey,
      senderSigningPublicKey: newKeys.signingPublicKey,
    });
    assertKeyVersion(snapshot.vault.keyVersion, v.keyVersion);
    const sent = new Map(sentWraps.filter((w) => w.userId !== account.userId).map((w) => [w.userId, w.encryptedVaultKey]));
    if (sent.size !== v.resigned.length || v.resigned.some((r) => !sent.has(r.userId))) throw resignedWrapsMismatch(v.vaultId);
    for (const r of v.resigned) {
      if (!signatureVerifies(Buffer.from(sent.get(r.userId)!, "base64"), Buffer.from(r.wrapSignature, "base64"), newKeys.signingPublicKey))
        throw invalid(`The wrap for ${r.userId} in vault ${v.vaultId} is not signed again by the new signing key`, "vaults.resigned");
    }
    out.set(
      v.vaultId,
      inVault(i, () =>
        rosterStep(snapshot, actor, v.rosterLink, snapshot.vault.keyVersion, {
          op: "rotate",
          subjectId: account.userId,
          subjectKey: keyFingerprint(newKeys),
          wraps: [{ userId: account.userId, encryptedVaultKey: v.encryptedVaultKey }],
        }),
      ),
    );
  }
  return out;
}

/** A refusal of one vault's roster link, naming the vault's place in the request (`vaults.3.rosterLink.prev`): the client reads that vault again. */
function inVault<T>(index: number, check: () => T): T {
  try {
    return check();
  } catch (err) {
    const field = err instanceof AppError ? (err.data as { field?: unknown } | undefined)?.field : undefined;
    if (err instanceof AppError && typeof field === "string" && field.startsWith(ROSTER_LINK_FIELD))
      throw new AppError(err.type as ErrorCode, err.message, { ...(err.data as object), field: `vaults.${index}.${field}` });
    throw err;
  }
}

/**
 * A new vault's wrap, under the owner's lock, still verifies with the owner's signing key: else the
 * owner rotated their keys while it was on its way (it is wrapped to, and signed by, keys that are
 * gone), and it is refused (`409`) rather than stored for keys nobody holds.
 */
export function decideWrapStillSigned(
  signingPublicKey: string | undefined,
  wrap: { encryptedVaultKey: string; wrapSignature: string },
): void {
  const signed =
    signingPublicKey !== undefined &&
    signatureVerifies(Buffer.from(wrap.encryptedVaultKey, "base64"), Buffer.from(wrap.wrapSignature, "base64"), signingPublicKey);
  if (!signed) throw keysRotatedMeanwhile();
}
