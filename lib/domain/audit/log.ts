/**
 * The audit log: per organization, an append-only chain of records, one per domain event.
 *
 * Each record carries `seq` (1, 2, 3, ... per organization), the previous record's hash
 * (`prevHash`; GENESIS_HASH for seq 1) and its own `hash`:
 *
 *   hash = hex(SHA-256(UTF-8(JSON.stringify([prevHash, eventId, seq, type, at, actorId, orgId,
 *                                            vaultId, itemId, targetUserId, inviteId]))))
 *
 * with `null` for an absent subject. Editing, removing or reordering a record breaks the chain at
 * that record (or at the next one, if its own hash was recomputed too); the organization's head
 * (last seq and hash, kept beside the records) also catches records cut off the end.
 */
import { unknownAuditHead } from "./refusals";
import { createHash, createPublicKey, randomBytes, sign } from "node:crypto";
import { ed25519KeyFromSeed } from "../accounts/keys";
import { auditCheckpointBytes, auditHashInput, type AuditCheckpoint } from "../../../protocol/formats/audit";
import type { OrgId } from "../ids";
import { EVENT_SUBJECTS, type DomainEvent } from "./events";

export const GENESIS_HASH = "0".repeat(64);

/** Records per page of GET /audit: `limit`'s default and most. */
export const DEFAULT_AUDIT_PAGE = 100;
export const MAX_AUDIT_PAGE = 500;

export interface AuditRecord extends DomainEvent {
  seq: number;
  prevHash: string;
  hash: string;
}

/** The last record of an organization's chain, or the genesis head when there is none. */
export interface AuditHead {
  seq: number;
  hash: string;
}

export const EMPTY_HEAD: AuditHead = { seq: 0, hash: GENESIS_HASH };

/** A record with its fields in the contract's order (what clients see), absent subjects left out. */
export function auditRecord(r: AuditRecord): AuditRecord {
  const out: Record<string, unknown> = { eventId: r.eventId, seq: r.seq, type: r.type, at: r.at, actorId: r.actorId, orgId: r.orgId };
  for (const key of EVENT_SUBJECTS) if (r[key] !== undefined && r[key] !== null) out[key] = r[key];
  out.prevHash = r.prevHash;
  out.hash = r.hash;
  return out as unknown as AuditRecord;
}

/** The hash of a record over its fields in the fixed canonical order (see above; the text is protocol/formats/audit.ts's, which clients check with). */
export function auditHash(record: Omit<AuditRecord, "hash">): string {
  return createHash("sha256").update(auditHashInput(record)).digest("hex");
}

/** The name the audit key's seed is stored under (store.audit.auditKeySeed). */
export const AUDIT_KEY_NAME = "audit-key";

/** A new audit key seed: 32 random bytes, base64. */
export const newAuditKeySeed = (): string => randomBytes(32).toString("base64");

const auditPrivateKey = (seedB64: string) => ed25519KeyFromSeed(Buffer.from(seedB64, "base64"));

/** The audit key's public half (raw Ed25519, base64), which clients pin. */
export function auditPublicKey(seedB64: string): string {
  const der = createPublicKey(auditPrivateKey(seedB64)).export({ format: "der", type: "spki" });
  return der.subarray(der.length - 32).toString("base64");
}

/** A checkpoint of an organization's head, signed with the audit key (format: protocol/formats/audit.ts). */
export function signAuditCheckpoint(seedB64: string, cp: Omit<AuditCheckpoint, "sig">): AuditCheckpoint {
  const body = { orgId: cp.orgId, seq: cp.seq, head: cp.head, at: cp.at };
  return { ...body, sig: sign(null, auditCheckpointBytes(body), auditPrivateKey(seedB64)).toString("base64") };
}

/** The record that appends `event` after `head`. */
export function nextAuditRecord(head: AuditHead, event: DomainEvent): AuditRecord {
  const unhashed: Omit<AuditRecord, "hash"> = { ...event, seq: head.seq + 1, prevHash: head.hash };
  return { ...unhashed, hash: auditHash(unhashed) };
}

/** Events grouped by organization (each organization has its own chain), in the order they came. */
export function eventsByOrg(events: DomainEvent[]): Map<OrgId, DomainEvent[]> {
  const byOrg = new Map<OrgId, DomainEvent[]>();
  for (const e of events) {
    const list = byOrg.get(e.orgId);
    if (list) list.push(e);
    else byOrg.set(e.orgId, [e]);
  }
  return byOrg;
}

/**
 * The records that append one organization's `events` after its `head`, skipping every event
 * whose id is in `recorded` (delivered again) and adding the ids it records (the same event twice
 * in one batch).
 */
export function chainRecords(head: AuditHead, events: DomainEvent[], recorded: Set<string>): AuditRecord[] {
  const records: AuditRecord[] = [];
  let last = head;
  for (const event of events) {
    if (recorded.has(event.eventId)) continue;
    recorded.add(event.eventId);
    const record = nextAuditRecord(last, event);
    records.push(record);
    last = record;
  }
  return records;
}

export type ChainVerdict = { ok: true; count: number; head: string } | { ok: false; count: number; brokenAt: number };

/**
 * Walks a chain in seq order, one record at a time (a long chain is read in pages), counts every
 * record and names the first seq that does not follow from the ones before it.
 */
export class ChainVerifier {
  private head: AuditHead = EMPTY_HEAD;
  private count = 0;
  private brokenAt: number | undefined;

  push(record: AuditRecord): void {
    this.count++;
    if (this.brokenAt !== undefined) return;
    const expectedSeq = this.head.seq + 1;
    if (record.seq !== expectedSeq || record.prevHash !== this.head.hash || auditHash(record) !== record.hash) {
      this.brokenAt = expectedSeq;
      return;
    }
    this.head = { seq: record.seq, hash: record.hash };
  }

  /**
   * The verdict, given the head the store keeps for the organization: a chain that verifies but
   * stops short of it has lost its newest records, and is broken at the first one missing.
   */
  verdict(storedHead: AuditHead): ChainVerdict {
    if (this.brokenAt !== undefined) return { ok: false, count: this.count, brokenAt: this.brokenAt };
    if (storedHead.seq !== this.head.seq || storedHead.hash !== this.head.hash) {
      // Same length, other hash: the last record was rewritten; shorter: records were cut off.
      const brokenAt = storedHead.seq === this.head.seq ? this.head.seq : Math.min(this.head.seq, storedHead.seq) + 1;
      return { ok: false, count: this.count, brokenAt };
    }
    return { ok: true, count: this.count, head: this.head.hash };
  }
}

/** Records read per page when a chain is verified. */
const VERIFY_PAGE = 1_000;

/**
 * Verifies an organization's chain up to `head` (read before the records, so appends that land
 * meanwhile are not mistaken for a break), reading it page by page through `readPage`.
 */
export async function verifyAuditChain(
  head: AuditHead,
  readPage: (afterSeq: number, upToSeq: number, limit: number) => Promise<AuditRecord[]>,
): Promise<ChainVerdict> {
  const verifier = new ChainVerifier();
  let after = 0;
  for (;;) {
    const page = await readPage(after, head.seq, VERIFY_PAGE);
    for (const record of page) verifier.push(record);
    if (page.length < VERIFY_PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  return verifier.verdict(head);
}

/**
 * A signed link's claim of the audit log (`AuditClaim`, protocol/formats/roster.ts): the head its signer
 * verified must be a record this organization's log holds, with that hash. `record` is the log's
 * record at the claimed seq (undefined when there is none); `field` is the link's request field.
 * One refusal for both (`400 INVALID`, `<field>.auditHead`): which of the two failed would tell a
 * member who may not read the log how long it is.
 */
export function decideAuditClaim(claim: { auditSeq?: number; auditHead?: string }, record: AuditRecord | undefined, field: string): void {
  if (claim.auditSeq === undefined) return;
  if (!record || record.seq !== claim.auditSeq || record.hash !== claim.auditHead) throw unknownAuditHead(field);
}
