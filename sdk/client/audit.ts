/**
 * The organization's audit log (owners and admins of the organization), checked here: every
 * record's hash recomputed and linked to the one before, none missing since the head this device
 * saw (and never shorter than, nor forked from, it), and a checkpoint of the head signed by the
 * server's audit key, pinned on first use. The server's own verdict (`serverAuditVerdict`) is
 * only its word.
 */
import {
  AUDIT_GENESIS,
  auditKeyFingerprint,
  auditRecordHash,
  checkAuditChain,
  checkAuditCheckpoint,
  type AuditCheckpoint,
  type AuditExport,
  type CheckedChain,
} from "../../protocol/formats/audit";
import { ApiError, SecurityError } from "../errors";
import type { AuditClaim } from "../../protocol/formats/links";
import { auditStateFingerprint } from "../fingerprints";
import { SerialQueue, type ClientCore } from "./core";
import type { AuditRecord } from "./types";

/** Records per page read when the log is checked. */
const AUDIT_PAGE = 500;
/** The pin store's key for the server's audit key. */
export const AUDIT_KEY_PIN = "server:audit-key";
/** The head store's key for an organization's audit head. */
export const auditHeadKey = (orgId: string) => `audit/${orgId}`;

/**
 * Audit hashes by seq a client keeps in memory per organization from its checks (the newest), to
 * judge the claims in links it reads; and how far below the head it verified a claim is still
 * judged (read down to): an older one, the head of a signer that has not checked the log for that
 * long, is let be, so that no link makes a client read a long log back.
 */
const KNOWN_AUDIT_HASHES = 10_000;
/** Claims kept in memory that could not be judged yet (the reader may not read the audit log now). */
const MAX_PENDING_CLAIMS = 1_000;

/** A link's audit claim, with the link it came in and who signed it, in words. */
export interface WitnessedClaim {
  auditSeq: number;
  auditHead: string;
  /** "item link 12 of vault …, signed by …": what the error names. */
  where: string;
}

const forked = (claim: WitnessedClaim, ours: string) =>
  new SecurityError(
    "AUDIT_FORK",
    `${claim.where}, says its signer verified audit record ${claim.auditSeq} with hash ${claim.auditHead.slice(0, 16)}…, but the record this device verified there has hash ${ours.slice(0, 16)}…: the server shows members two audit histories`,
  );

/** The claims `links` carry, each distinct head once (with the first link that names it). */
export function claimsIn<L extends AuditClaim & { actorId: string }>(links: readonly L[], where: (link: L) => string): WitnessedClaim[] {
  const out = new Map<string, WitnessedClaim>();
  for (const link of links) {
    if (link.auditSeq === undefined || link.auditHead === undefined) continue;
    const id = `${link.auditSeq}:${link.auditHead}`;
    if (!out.has(id))
      out.set(id, { auditSeq: link.auditSeq, auditHead: link.auditHead, where: `${where(link)}, signed by ${link.actorId}` });
  }
  return [...out.values()];
}

/** What a check made here found. */
export interface CheckedAuditLog {
  ok: true;
  /** Records in the log (up to its head). */
  count: number;
  seq: number;
  head: string;
  /** Records whose hashes this check recomputed (those after the head this device saw before). */
  checkedNow: number;
  /** The head this device had seen before this check, which the log still holds. */
  seenBefore?: { seq: number; hash: string };
  /** The checkpoint the server signed, and the fingerprint (SHA-256) of the key it verified with. */
  checkpoint: AuditCheckpoint;
  auditKeyFingerprint: string;
  /** `auditStateFingerprint` of the head, to compare with another owner or admin out of band. */
  fingerprint: string;
  /** The records read (newest first), each checked. */
  records: AuditRecord[];
  /** Every record was read and checked from the first (else only those since the head seen before). */
  full: boolean;
}

export class Audit {
  /** Seen heads are compared and moved one check at a time, never back. */
  private readonly heads = new SerialQueue();
  /** Per organization, the hashes by seq this client's checks verified (the newest KNOWN_AUDIT_HASHES). */
  private readonly known = new Map<string, Map<number, string>>();
  /** Per organization, claims not judged yet: checked by the next `verifyAuditLog`. */
  private readonly pending = new Map<string, WitnessedClaim[]>();

  constructor(private readonly core: ClientCore) {}

  /** The organization's audit log, newest first (one page, as the server gives it: unchecked). */
  auditLog(opts: { orgId?: string; limit?: number; before?: number } = {}): Promise<{ events: AuditRecord[]; nextBefore: number | null }> {
    return this.core.http.request("GET", "/audit", {
      query: { orgId: opts.orgId ?? this.core.account.orgId, limit: opts.limit, before: opts.before },
    });
  }

  /** The server's check of its own chain: its word only (`verifyAuditLog` checks it here). */
  serverAuditVerdict(orgId = this.core.account.orgId): Promise<{ ok: boolean; count: number; head?: string; brokenAt?: number }> {
    return this.core.http.request("GET", "/audit/verify", { query: { orgId } });
  }

  /** The server's audit key, pinned on first use: another one later is `AUDIT_KEY_CHANGED`. */
  async auditKey(): Promise<string> {
    const { publicKey } = await this.core.http.request<{ publicKey: string }>("GET", "/audit/key");
    const pinned = await this.core.pins.get(AUDIT_KEY_PIN);
    const pinnedKey = typeof pinned === "string" ? pinned : pinned?.fingerprint;
    if (pinnedKey === undefined) await this.core.pins.set(AUDIT_KEY_PIN, publicKey);
    else if (pinnedKey !== publicKey)
      throw new SecurityError(
        "AUDIT_KEY_CHANGED",
        `the server's audit key is not the one this device pinned (${(await auditKeyFingerprint(pinnedKey)).slice(0, 16)}…): its checkpoints are not accepted`,
      );
    return publicKey;
  }

  /**
   * What a link this client signs says of the audit log (`AuditClaim`): the head this device
   * verified for the organization, or nothing when it never checked the log.
   */
  async claimToSign(orgId = this.core.account.orgId): Promise<AuditClaim> {
    const seen = await this.core.rosterHeads.get(auditHeadKey(orgId));
    return seen && seen.seq > 0 ? { auditSeq: seen.seq, auditHead: seen.hash } : {};
  }

  /**
   * Judges the audit claims of links other members signed (their signatures verified) against
   * the log this device verified: another hash at a seq is `AUDIT_FORK`. A claim this client
   * cannot judge from memory (past its head, or before the hashes it keeps) makes it check the log
   * now, down to the claim; one more than KNOWN_AUDIT_HASHES records below its head is let be. The
   * caller reads the links again after a refusal: it moves no head past them before this returns.
   * Only a `403` (the reader may not read the audit log: no longer an owner or admin) leaves the
   * claims waiting, in memory, for a check that can; any other failure is the caller's. A device
   * that never checked the log cannot judge, and skips.
   */
  async witness(orgId: string, claims: readonly WitnessedClaim[]): Promise<void> {
    if (claims.length === 0) return;
    const seen = await this.core.rosterHeads.get(auditHeadKey(orgId));
    if (!seen) return;
    const known = this.known.get(orgId);
    const undecided = claims.filter((claim) => {
      if (claim.auditSeq < seen.seq - KNOWN_AUDIT_HASHES) return false;
      const ours = claim.auditSeq === seen.seq ? seen.hash : known?.get(claim.auditSeq);
      if (ours !== undefined && ours !== claim.auditHead) throw forked(claim, ours);
      return ours === undefined;
    });
    if (undecided.length === 0) return;
    this.pending.set(orgId, [...(this.pending.get(orgId) ?? []), ...undecided].slice(-MAX_PENDING_CLAIMS));
    try {
      await this.verifyAuditLog(orgId);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 403)) throw err;
    }
  }

  /**
   * Judges claims that waited (taken when a check started, so that it read down to them) against
   * the chain it checked; they leave the waiting list only when they agree with it.
   */
  private judge(
    orgId: string,
    waiting: readonly WitnessedClaim[],
    chain: CheckedChain,
    seen: { seq: number; hash: string } | undefined,
  ): void {
    for (const claim of waiting) {
      if (claim.auditSeq > chain.seq)
        throw new SecurityError(
          "AUDIT_ROLLBACK",
          `${claim.where}, says its signer verified audit record ${claim.auditSeq}, but the server shows this device the log up to record ${chain.seq}: records were cut off`,
        );
      const ours = claim.auditSeq === seen?.seq ? seen.hash : chain.hashAt(claim.auditSeq);
      if (ours !== undefined && ours !== claim.auditHead) throw forked(claim, ours);
    }
    const rest = (this.pending.get(orgId) ?? []).filter((c) => !waiting.includes(c));
    if (rest.length > 0) this.pending.set(orgId, rest);
    else this.pending.delete(orgId);
  }

  /** Keeps the hashes a check verified (the newest KNOWN_AUDIT_HASHES per organization). */
  private keep(orgId: string, hashes: Iterable<readonly [number, string]>): void {
    const known = this.known.get(orgId) ?? new Map<number, string>();
    for (const [seq, hash] of hashes) known.set(seq, hash);
    if (known.size > KNOWN_AUDIT_HASHES) {
      const floor = [...known.keys()].sort((a, b) => b - a)[KNOWN_AUDIT_HASHES - 1]!;
      for (const seq of known.keys()) if (seq < floor) known.delete(seq);
    }
    this.known.set(orgId, known);
  }

  /**
   * Checks the organization's audit log here: reads the records newest first down to the head
   * this device saw (all of them the first time), recomputes each hash and link, refuses a log
   * shorter than, or different at, the seen head (`AUDIT_ROLLBACK`), a gap, a reorder or a change
   * (`AUDIT_BROKEN`), and a checkpoint not signed by the pinned audit key or naming another head
   * (`AUDIT_CHECKPOINT_INVALID`). Then remembers the new head.
   */
  async verifyAuditLog(orgId = this.core.account.orgId, opts: { full?: boolean } = {}): Promise<CheckedAuditLog> {
    const key = await this.auditKey();
    const checkpoint = await this.core.http.request<AuditCheckpoint>("GET", "/audit/checkpoint", { query: { orgId } });
    const seen = await this.core.rosterHeads.get(auditHeadKey(orgId));
    // Below the seen head only to judge a claim that waits there, from the record at it, which must chain up to the seen one.
    const waiting = [...(this.pending.get(orgId) ?? [])];
    const downTo = Math.min(...waiting.map((c) => c.auditSeq));
    const below = !opts.full && seen && downTo < seen.seq ? Math.max(1, downTo) : undefined;
    // Down to the seen head's record (its hash is compared), or, with `full`, every record (a page that shows them all).
    const records = await this.readRecords(orgId, opts.full ? undefined : (below ?? seen?.seq), checkpoint.seq);
    const newest = records.reduce((max, r) => Math.max(max, r.seq), 0);
    if (seen && newest < seen.seq)
      throw new SecurityError(
        "AUDIT_ROLLBACK",
        `the server shows the audit log up to record ${newest}, but this device saw record ${seen.seq}: records were cut off`,
      );
    if (seen && seen.seq > 0) {
      const atSeen = records.find((r) => r.seq === seen.seq);
      // Its content too, not only the hash it carries: the record shown is the one seen.
      if (!atSeen || atSeen.hash !== seen.hash || (await auditRecordHash(atSeen)) !== seen.hash)
        throw new SecurityError(
          "AUDIT_ROLLBACK",
          `the server shows another audit record ${seen.seq} than the one this device saw: a rewritten or forked log`,
        );
    }
    const lowest = below === undefined ? undefined : records.find((r) => r.seq === below);
    if (below !== undefined && !lowest)
      throw new SecurityError("AUDIT_BROKEN", `the server's audit log has no record ${below}, below the one this device saw`);
    const from =
      opts.full || !seen || below === 1 ? { seq: 0, hash: AUDIT_GENESIS } : lowest ? { seq: below! - 1, hash: lowest.prevHash } : seen;
    const chain = await checkAuditChain(orgId, records, from);
    await checkAuditCheckpoint(orgId, chain, checkpoint, key);
    // Read again: another check may have moved the head meanwhile; never back, and not onto another history.
    await this.heads.run(async () => {
      const now = await this.core.rosterHeads.get(auditHeadKey(orgId));
      if (now && now.seq <= chain.seq && chain.hashAt(now.seq) !== now.hash)
        throw new SecurityError(
          "AUDIT_ROLLBACK",
          `the server shows another audit record ${now.seq} than the one this device saw meanwhile`,
        );
      if (!now || chain.seq > now.seq) await this.core.rosterHeads.set(auditHeadKey(orgId), { seq: chain.seq, hash: chain.head });
    });
    // The records this check vouches for: those it hashed, and the one at the head seen before.
    const checked = records.filter((r) => r.seq > from.seq || r.seq === seen?.seq);
    this.keep(
      orgId,
      checked.map((r) => [r.seq, r.hash] as const),
    );
    // The claims of other members' links this device could not judge yet (read down to them above).
    this.judge(orgId, waiting, chain, seen);
    return {
      ok: true,
      count: chain.count,
      seq: chain.seq,
      head: chain.head,
      checkedNow: chain.seq - from.seq,
      ...(seen && { seenBefore: { seq: seen.seq, hash: seen.hash } }),
      checkpoint,
      auditKeyFingerprint: await auditKeyFingerprint(key),
      fingerprint: await auditStateFingerprint(orgId, { seq: chain.seq, head: chain.head }),
      records: checked.sort((a, b) => b.seq - a.seq),
      full: from.seq === 0,
    };
  }

  /**
   * Records newest first, down to seq `downTo` (included), or all of them. Pages must go back
   * (each `nextBefore` a seq of at least 1, below the one before and at most the page's oldest),
   * and there are at most as many records as the newest seq allows (the checkpoint's, read
   * first, or the newest record's): a server cannot keep a client reading.
   */
  private async readRecords(orgId: string, downTo: number | undefined, checkpointSeq: number): Promise<AuditRecord[]> {
    const records: AuditRecord[] = [];
    let before: number | null | undefined;
    let newest: number | undefined;
    do {
      const page = await this.auditLog({ orgId, limit: AUDIT_PAGE, before: before ?? undefined });
      if (!Array.isArray(page.events) || page.events.length > AUDIT_PAGE)
        throw new SecurityError("AUDIT_BROKEN", `the server's audit page is not a list of at most ${AUDIT_PAGE} records`);
      records.push(...page.events);
      newest ??= Math.max(checkpointSeq, Number(page.events[0]?.seq) || 0);
      if (records.length > newest)
        throw new SecurityError("AUDIT_BROKEN", "the server's audit pages hold more records than its newest seq");
      const oldest = page.events.at(-1);
      if (downTo !== undefined && oldest && oldest.seq <= downTo) break;
      const next = page.nextBefore;
      if (next !== null && (!Number.isSafeInteger(next) || !oldest || next < 1 || next > oldest.seq || next >= (before ?? Infinity)))
        throw new SecurityError("AUDIT_BROKEN", "the server's audit pages do not go back");
      before = next;
    } while (before !== null && before !== undefined);
    return records;
  }

  /** The whole log, checked here, with a signed checkpoint and the audit key: for `vaultctl audit verify FILE` on any machine. */
  async exportAuditLog(orgId = this.core.account.orgId): Promise<AuditExport> {
    const key = await this.auditKey();
    const checkpoint = await this.core.http.request<AuditCheckpoint>("GET", "/audit/checkpoint", { query: { orgId } });
    const records = await this.readRecords(orgId, undefined, checkpoint.seq);
    const chain = await checkAuditChain(orgId, records);
    await checkAuditCheckpoint(orgId, chain, checkpoint, key);
    // Up to the signed head exactly: a record past it would be vouched for by nothing in the file.
    const signed = records.filter((r) => r.seq <= checkpoint.seq).sort((a, b) => a.seq - b.seq);
    return { format: "vault-audit-export/v1", orgId, auditKey: key, checkpoint, records: signed };
  }
}
