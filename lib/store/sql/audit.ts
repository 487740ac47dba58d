/** The audit log on SQL (the port: ../port/audit.ts; MongoDB: ../mongo/audit.ts). */
import type { OrgId } from "../../domain/ids";
import {
  AUDIT_KEY_NAME,
  auditRecord,
  chainRecords,
  EMPTY_HEAD,
  eventsByOrg,
  type AuditHead,
  type AuditRecord,
} from "../../domain/audit/log";
import type { DomainEvent } from "../../domain/audit/events";
import type { AppendOutcome, ArgsOf, AuditStore } from "../port";
import { chunks, type SqlContext } from "./context";
import type { AuditEventsTable } from "./schema";

function toAuditRecord(r: AuditEventsTable): AuditRecord {
  return auditRecord({
    eventId: r.event_id,
    seq: Number(r.seq),
    type: r.type,
    at: r.at,
    actorId: r.actor_id,
    orgId: r.org_id,
    vaultId: r.vault_id ?? undefined,
    itemId: r.item_id ?? undefined,
    targetUserId: r.target_user_id ?? undefined,
    inviteId: r.invite_id ?? undefined,
    prevHash: r.prev_hash,
    hash: r.hash,
  });
}

function auditRow(r: AuditRecord): AuditEventsTable {
  return {
    org_id: r.orgId,
    seq: r.seq,
    event_id: r.eventId,
    type: r.type,
    at: r.at,
    actor_id: r.actorId,
    vault_id: r.vaultId ?? null,
    item_id: r.itemId ?? null,
    target_user_id: r.targetUserId ?? null,
    invite_id: r.inviteId ?? null,
    prev_hash: r.prevHash,
    hash: r.hash,
  };
}

export class SqlAudit implements AuditStore {
  constructor(private readonly c: SqlContext) {}

  async appendAuditEvents(events: DomainEvent[]): Promise<AppendOutcome> {
    if (events.length === 0) return { appended: 0, alreadyRecorded: 0 };
    const byOrg = eventsByOrg(events);
    return this.c.tx(async (trx) => {
      // Heads first, in a fixed order (no deadlock between workers); then, under their locks, the
      // check for events already recorded: a worker racing on the same event waits, then skips it.
      const heads = new Map<OrgId, AuditHead>();
      for (const orgId of [...byOrg.keys()].sort()) {
        // One statement creates the head or, when it exists, locks its row (a no-op update) and reads it.
        const head = await trx
          .insertInto("audit_heads")
          .values({ org_id: orgId, seq: EMPTY_HEAD.seq, hash: EMPTY_HEAD.hash })
          .onConflict((oc) => oc.column("org_id").doUpdateSet({ seq: (eb) => eb.ref("audit_heads.seq") }))
          .returning(["seq", "hash"])
          .executeTakeFirstOrThrow();
        heads.set(orgId, { seq: Number(head.seq), hash: head.hash });
      }
      const recorded = new Set<string>();
      for (const chunk of chunks(
        events.map((e) => e.eventId),
        this.c.engine.batchRows,
      )) {
        const rows = await trx.selectFrom("audit_events").select("event_id").where("event_id", "in", chunk).execute();
        for (const r of rows) recorded.add(r.event_id);
      }
      let appended = 0;
      for (const [orgId, orgEvents] of byOrg) {
        const records = chainRecords(heads.get(orgId)!, orgEvents, recorded);
        if (records.length === 0) continue;
        for (const chunk of chunks(records, 100)) await trx.insertInto("audit_events").values(chunk.map(auditRow)).execute();
        const head = records[records.length - 1]!;
        await trx.updateTable("audit_heads").set({ seq: head.seq, hash: head.hash }).where("org_id", "=", orgId).execute();
        appended += records.length;
      }
      return { appended, alreadyRecorded: events.length - appended };
    });
  }

  async listAuditRecords({ orgId, limit, before }: ArgsOf<AuditStore["listAuditRecords"]>): Promise<AuditRecord[]> {
    let q = this.c.db.selectFrom("audit_events").selectAll().where("org_id", "=", orgId);
    if (before !== undefined) q = q.where("seq", "<", before);
    return (await q.orderBy("seq", "desc").limit(limit).execute()).map(toAuditRecord);
  }

  async readAuditChain({ orgId, afterSeq, upToSeq, limit }: ArgsOf<AuditStore["readAuditChain"]>): Promise<AuditRecord[]> {
    const rows = await this.c.db
      .selectFrom("audit_events")
      .selectAll()
      .where("org_id", "=", orgId)
      .where("seq", ">", afterSeq)
      .where("seq", "<=", upToSeq)
      .orderBy("seq")
      .limit(limit)
      .execute();
    return rows.map(toAuditRecord);
  }

  async auditKeySeed(candidate: string, now: string): Promise<string> {
    await this.c.db
      .insertInto("server_keys")
      .values({ name: AUDIT_KEY_NAME, value: candidate, created_at: now })
      .onConflict((oc) => oc.column("name").doNothing())
      .execute();
    const row = await this.c.db.selectFrom("server_keys").select("value").where("name", "=", AUDIT_KEY_NAME).executeTakeFirstOrThrow();
    return row.value;
  }

  async auditHead(orgId: OrgId): Promise<AuditHead> {
    const row = await this.c.db.selectFrom("audit_heads").select(["seq", "hash"]).where("org_id", "=", orgId).executeTakeFirst();
    return row ? { seq: Number(row.seq), hash: row.hash } : EMPTY_HEAD;
  }
}
