/** The signed organization log on MongoDB (SQL: ../sql/org-log.ts; the port: ../port/org-log.ts). */
import type { ClientSession } from "mongodb";
import type { OrgId } from "../../domain/ids";
import { decideOrgLogStep, type OrgLogEntry } from "../../domain/orgs/log";
import type { ArgsOf, OrgLogStore } from "../port";
import type { MongoContext } from "./context";
import { orgLogKey } from "./documents";

/** The organization's document written: its log's appends and its removals one at a time (a concurrent one conflicts and retries). */
export async function lockOrg(c: MongoContext, session: ClientSession, orgId: OrgId): Promise<void> {
  await c.orgs.updateOne({ _id: orgId }, { $inc: { writeSeq: 1 } }, { session });
}

/** Appends `entry` after the stored head; the caller holds the organization's lock (`lockOrg`). */
export async function appendOrgLink(
  c: MongoContext,
  session: ClientSession,
  orgId: OrgId,
  entry: OrgLogEntry,
  field: string,
  now: string,
): Promise<void> {
  const last = await c.orgLog
    .find({ orgId }, { session, projection: { seq: 1, hash: 1 } })
    .sort({ seq: -1 })
    .limit(1)
    .toArray();
  decideOrgLogStep(last[0] ? { seq: last[0].seq, hash: last[0].hash } : null, entry, field);
  await c.orgLog.insertOne(
    { _id: orgLogKey(orgId, entry.seq), orgId, seq: entry.seq, hash: entry.hash, link: JSON.stringify(entry.link), createdAt: now },
    { session },
  );
}

export class MongoOrgLog implements OrgLogStore {
  constructor(private readonly c: MongoContext) {}

  async links(orgId: OrgId): Promise<unknown[]> {
    const docs = await this.c.orgLog
      .find({ orgId }, { projection: { link: 1 } })
      .sort({ seq: 1 })
      .toArray();
    return docs.map((d) => JSON.parse(d.link) as unknown);
  }

  async append({ orgId, entry, field, now }: ArgsOf<OrgLogStore["append"]>): Promise<void> {
    await this.c.tx(async (session) => {
      await lockOrg(this.c, session, orgId);
      await appendOrgLink(this.c, session, orgId, entry, field, now);
    });
  }
}
