/** The audit chain's rules (lib/domain/audit/log.ts): each record's hash, the chain's verdict, and a link's audit claim. */
import { newId, type UserId } from "../../../../../lib/domain/ids";
import { createHash } from "node:crypto";
import type { AppError } from "../../../../../lib/errors";
import {
  auditHash,
  ChainVerifier,
  decideAuditClaim,
  EMPTY_HEAD,
  GENESIS_HASH,
  nextAuditRecord,
  type AuditRecord,
} from "../../../../../lib/domain/audit/log";
import { unknownAuditHead } from "../../../../../lib/domain/audit/refusals";
import { event } from "../../../../helpers/domain-event";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

function chainOf(n: number): AuditRecord[] {
  const out: AuditRecord[] = [];
  let head = EMPTY_HEAD;
  for (let i = 0; i < n; i++) {
    const r = nextAuditRecord(head, event());
    out.push(r);
    head = r;
  }
  return out;
}

function verify(records: AuditRecord[], head = { seq: records.at(-1)?.seq ?? 0, hash: records.at(-1)?.hash ?? GENESIS_HASH }) {
  const v = new ChainVerifier();
  for (const r of records) v.push(r);
  return v.verdict(head);
}

describe("audit chain", () => {
  test("the hash is SHA-256 over prevHash and the fields in the documented order, null for absent subjects", () => {
    const e = event({ itemId: undefined });
    const r = nextAuditRecord(EMPTY_HEAD, e);
    const canonical = JSON.stringify([GENESIS_HASH, e.eventId, 1, e.type, e.at, e.actorId, e.orgId, e.vaultId, null, null, null]);
    expect(r).toMatchObject({ seq: 1, prevHash: GENESIS_HASH, hash: createHash("sha256").update(canonical).digest("hex") });
    const next = nextAuditRecord(r, event());
    expect(next).toMatchObject({ seq: 2, prevHash: r.hash });
    expect(auditHash(next)).toBe(next.hash);
  });

  test("an intact chain verifies, and reports its count and head", () => {
    const chain = chainOf(5);
    expect(verify(chain)).toEqual({ ok: true, count: 5, head: chain[4]!.hash });
    expect(verify([])).toEqual({ ok: true, count: 0, head: GENESIS_HASH });
  });

  test("an edited record is named; so is the next one when the edit recomputed the hash", () => {
    const chain = chainOf(6);
    const edited = chain.map((r) => (r.seq === 3 ? { ...r, actorId: newId<UserId>() } : r));
    expect(verify(edited, chain[5])).toEqual({ ok: false, count: 6, brokenAt: 3 });
    const rehashed = chain
      .map((r) => (r.seq === 3 ? { ...r, type: "item.deleted" as const } : r))
      .map((r) => (r.seq === 3 ? { ...r, hash: auditHash(r) } : r));
    expect(verify(rehashed, chain[5])).toEqual({ ok: false, count: 6, brokenAt: 4 });
  });

  test("a removed, reordered or cut-off record is named", () => {
    const chain = chainOf(5);
    const head = { seq: 5, hash: chain[4]!.hash };
    expect(
      verify(
        chain.filter((r) => r.seq !== 2),
        head,
      ),
    ).toMatchObject({ ok: false, brokenAt: 2 });
    expect(verify([chain[0]!, chain[2]!, chain[1]!, chain[3]!, chain[4]!], head)).toMatchObject({ ok: false, brokenAt: 2 });
    expect(verify(chain.slice(0, 3), head)).toEqual({ ok: false, count: 3, brokenAt: 4 });
    // The last record rewritten with a fresh hash: only the head kept beside the chain tells.
    const last = { ...chain[4]!, actorId: newId<UserId>() };
    expect(verify([...chain.slice(0, 4), { ...last, hash: auditHash(last) }], head)).toEqual({ ok: false, count: 5, brokenAt: 5 });
  });
});

describe("a link's audit claim (decideAuditClaim)", () => {
  const [, second] = chainOf(2);
  test.each<[string, { auditSeq?: number; auditHead?: string }, AuditRecord | undefined, "ok" | AppError]>([
    ["no claim", {}, second, "ok"],
    ["the log's record and hash", { auditSeq: 2, auditHead: second!.hash }, second, "ok"],
    ["another hash at that seq", { auditSeq: 2, auditHead: "f".repeat(64) }, second, unknownAuditHead("itemLink")],
    ["a seq the log does not hold", { auditSeq: 3, auditHead: second!.hash }, undefined, unknownAuditHead("itemLink")],
    ["a record of another seq", { auditSeq: 3, auditHead: second!.hash }, second, unknownAuditHead("itemLink")],
  ])("%s", (_what, claim, record, expected) => {
    expect(outcomeOf(() => decideAuditClaim(claim, record, "itemLink"))).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
  });
});
