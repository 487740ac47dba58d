// The audit log as a client checks it: record hashes, the chain, and the signed checkpoint.
// Design: docs/design/audit-log-checks.md
import { canonicalJson } from "../canonical";
import { fromBase64, toHex, utf8, type Bytes } from "../encoding";
import { SecurityError } from "../errors";
import { ed25519Verify, sha256 } from "../crypto/primitives";

/** The subjects a record may name, in the order the hash covers them. */
export const AUDIT_SUBJECTS = ["vaultId", "itemId", "targetUserId", "inviteId"] as const;
export const AUDIT_GENESIS = "0".repeat(64);
export const AUDIT_CHECKPOINT_CONTEXT = "vault-audit-checkpoint/v1\n";

/** One record of an organization's audit log (contract section 8), as the server answers it. */
export interface AuditRecord {
  eventId: string;
  seq: number;
  type: string;
  at: string;
  actorId: string;
  orgId: string;
  vaultId?: string;
  itemId?: string;
  targetUserId?: string;
  inviteId?: string;
  prevHash: string;
  hash: string;
}

/** The text a record's hash covers (see above). */
export function auditHashInput(r: Omit<AuditRecord, "hash">): string {
  return JSON.stringify([r.prevHash, r.eventId, r.seq, r.type, r.at, r.actorId, r.orgId, ...AUDIT_SUBJECTS.map((k) => r[k] ?? null)]);
}

export async function auditRecordHash(r: Omit<AuditRecord, "hash">): Promise<string> {
  return toHex(await sha256(utf8(auditHashInput(r))));
}

/** A head the server signed with its audit key. */
export interface AuditCheckpoint {
  orgId: string;
  seq: number;
  head: string;
  at: string;
  /** Ed25519 over AUDIT_CHECKPOINT_CONTEXT + canonical JSON of { orgId, seq, head, at }, base64. */
  sig: string;
}

export const auditCheckpointBytes = (cp: Omit<AuditCheckpoint, "sig">): Bytes =>
  utf8(AUDIT_CHECKPOINT_CONTEXT + canonicalJson({ orgId: cp.orgId, seq: cp.seq, head: cp.head, at: cp.at }));

export async function auditCheckpointVerifies(cp: AuditCheckpoint, publicKeyB64: string): Promise<boolean> {
  try {
    return await ed25519Verify(fromBase64(publicKeyB64), auditCheckpointBytes(cp), fromBase64(cp.sig));
  } catch {
    return false;
  }
}

/** The SHA-256 (hex) of the audit key's raw bytes: what a client pins and people compare. */
export async function auditKeyFingerprint(publicKeyB64: string): Promise<string> {
  return toHex(await sha256(fromBase64(publicKeyB64)));
}

/** What a chain checked here comes to: its length and head. */
export interface CheckedChain {
  count: number;
  seq: number;
  head: string;
  /** Each record's hash by seq, to compare a seen head or a checkpoint with. */
  hashAt: (seq: number) => string | undefined;
}

/**
 * Checks an organization's records (any order; they are sorted by seq here): seqs 1, 2, 3, ...
 * with none missing or twice, each record's hash recomputed, each naming the one before's.
 * Throws `AUDIT_BROKEN` naming the first record that does not follow.
 */
export async function checkAuditChain(
  orgId: string,
  records: readonly AuditRecord[],
  /** A head checked before (a seen one): only the records after it are read, and must follow from it. */
  from: { seq: number; hash: string } = { seq: 0, hash: AUDIT_GENESIS },
): Promise<CheckedChain> {
  const sorted = [...records].filter((r) => r.seq > from.seq).sort((a, b) => a.seq - b.seq);
  const hashes = new Map<number, string>([[from.seq, from.hash]]);
  let prev = from.hash;
  for (const [i, r] of sorted.entries()) {
    const expected = from.seq + i + 1;
    if (r.orgId !== orgId)
      throw new SecurityError("AUDIT_BROKEN", `audit record ${r.seq} belongs to organization ${r.orgId}, not ${orgId}`);
    if (r.seq !== expected)
      throw new SecurityError(
        "AUDIT_BROKEN",
        r.seq > expected ? `audit record ${expected} is missing: the records jump to ${r.seq}` : `audit record ${r.seq} appears twice`,
      );
    if (r.prevHash !== prev)
      throw new SecurityError(
        "AUDIT_BROKEN",
        `audit record ${r.seq} does not name the hash of record ${r.seq - 1}: records were dropped, reordered or changed`,
      );
    const hash = await auditRecordHash(r);
    if (r.hash !== hash)
      throw new SecurityError("AUDIT_BROKEN", `audit record ${r.seq} does not hash to the hash it carries: it was changed`);
    hashes.set(r.seq, hash);
    prev = hash;
  }
  const seq = from.seq + sorted.length;
  return { count: seq, seq, head: prev, hashAt: (s) => (s === 0 ? AUDIT_GENESIS : hashes.get(s)) };
}

/**
 * A checkpoint against a chain checked here: signed by `publicKeyB64` for this organization, and
 * naming a head the chain has (the chain may have grown since). Throws `AUDIT_CHECKPOINT_INVALID`.
 */
export async function checkAuditCheckpoint(orgId: string, chain: CheckedChain, cp: AuditCheckpoint, publicKeyB64: string): Promise<void> {
  if (cp.orgId !== orgId)
    throw new SecurityError("AUDIT_CHECKPOINT_INVALID", `the audit checkpoint is for organization ${cp.orgId}, not ${orgId}`);
  if (!(await auditCheckpointVerifies(cp, publicKeyB64)))
    throw new SecurityError("AUDIT_CHECKPOINT_INVALID", "the audit checkpoint is not signed by the server's pinned audit key");
  if (cp.seq > chain.seq || chain.hashAt(cp.seq) !== cp.head)
    throw new SecurityError(
      "AUDIT_CHECKPOINT_INVALID",
      `the server signed head ${cp.seq} of the audit log, which the records ${cp.seq > chain.seq ? `stop short of (they end at ${chain.seq})` : "give another hash"}`,
    );
}

/** An exported audit log: what `vaultctl audit export` writes and `vaultctl audit verify FILE` checks. */
export interface AuditExport {
  format: "vault-audit-export/v1";
  orgId: string;
  auditKey: string;
  checkpoint: AuditCheckpoint;
  records: AuditRecord[];
}

/** Checks an export offline: the chain, and its checkpoint against `pinnedKey` (the audit key pinned, or given). */
export async function verifyAuditExport(file: AuditExport, pinnedKey: string): Promise<CheckedChain> {
  if (file?.format !== "vault-audit-export/v1" || !Array.isArray(file.records))
    throw new SecurityError("AUDIT_BROKEN", "not an audit export (format vault-audit-export/v1)");
  if (file.auditKey !== pinnedKey)
    throw new SecurityError("AUDIT_CHECKPOINT_INVALID", "the export names another audit key than the one pinned");
  const chain = await checkAuditChain(file.orgId, file.records);
  await checkAuditCheckpoint(file.orgId, chain, file.checkpoint, pinnedKey);
  // Every record up to the signed head, and none past it: what the key signed is the whole file.
  if (file.checkpoint.seq !== chain.seq)
    throw new SecurityError(
      "AUDIT_CHECKPOINT_INVALID",
      `the file holds records past the signed head (${file.checkpoint.seq}): nothing vouches for them`,
    );
  return chain;
}
