/** The audit log on MongoDB (the port: ../port/audit.ts; SQL: ../sql/audit.ts). */
import type { OrgId } from "../../domain/ids";
import { AUDIT_KEY_NAME, chainRecords, EMPTY_HEAD, eventsByOrg, type AuditHead, type AuditRecord } from "../../domain/audit/log";
import type { DomainEvent } from "../../domain/audit/events";
import type { AppendOutcome, ArgsOf, AuditStore } from "../port";
import type { MongoContext } from "./context";
import { auditDoc, toAuditRecord } from "./documents";

export class MongoAudit implements AuditStore {
  constructor(private readonly c: MongoContext) {}

  async appendAuditEvents(events: DomainEvent[]): Promise<AppendOutcome> {
    if (events.length === 0) return { appended: 0, alreadyRecorded: 0 };
    const byOrg = eventsByOrg(events);
    return this.c.tx(async (session) => {
      // Each head is written first (the lock: a concurrent append retries on the new state), in a
      // fixed order; then, on this snapshot, the check for events already recorded.
      const heads = new Map<string, AuditHead>();
      for (const orgId of [...byOrg.keys()].sort()) {
        const head = await this.c.auditHeads.findOneAndUpdate(
          { _id: orgId },
          { $inc: { writes: 1 }, $setOnInsert: { seq: EMPTY_HEAD.seq, hash: EMPTY_HEAD.hash } },
          { upsert: true, returnDocument: "after", session },
        );
        heads.set(orgId, { seq: head!.seq, hash: head!.hash });
      }
      const ids = events.map((e) => e.eventId);
      const recorded = new Set(
        (await this.c.auditEvents.find({ _id: { $in: ids } }, { session, projection: { _id: 1 } }).toArray()).map((d) => d._id),
      );
      let appended = 0;
      for (const [orgId, orgEvents] of byOrg) {
        const records = chainRecords(heads.get(orgId)!, orgEvents, recorded);
        if (records.length === 0) continue;
        await this.c.auditEvents.insertMany(records.map(auditDoc), { session });
        const head = records[records.length - 1]!;
        await this.c.auditHeads.updateOne({ _id: orgId }, { $set: { seq: head.seq, hash: head.hash } }, { session });
        appended += records.length;
      }
      return { appended, alreadyRecorded: events.length - appended };
    });
  }

  async listAuditRecords({ orgId, limit, before }: ArgsOf<AuditStore["listAuditRecords"]>): Promise<AuditRecord[]> {
    const filter = before === undefined ? { orgId } : { orgId, seq: { $lt: before } };
    return (await this.c.auditEvents.find(filter).sort({ seq: -1 }).limit(limit).toArray()).map(toAuditRecord);
  }

  async readAuditChain({ orgId, afterSeq, upToSeq, limit }: ArgsOf<AuditStore["readAuditChain"]>): Promise<AuditRecord[]> {
    const docs = await this.c.auditEvents
      .find({ orgId, seq: { $gt: afterSeq, $lte: upToSeq } })
      .sort({ seq: 1 })
      .limit(limit)
      .toArray();
    return docs.map(toAuditRecord);
  }

  async auditKeySeed(candidate: string, now: string): Promise<string> {
    await this.c.serverKeys.updateOne({ _id: AUDIT_KEY_NAME }, { $setOnInsert: { value: candidate, createdAt: now } }, { upsert: true });
    const doc = await this.c.serverKeys.findOne({ _id: AUDIT_KEY_NAME });
    return doc!.value;
  }

  async auditHead(orgId: OrgId): Promise<AuditHead> {
    const doc = await this.c.auditHeads.findOne({ _id: orgId });
    return doc ? { seq: doc.seq, hash: doc.hash } : EMPTY_HEAD;
  }
}
