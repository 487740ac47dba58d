/** The signed organization log on SQL (MongoDB: ../mongo/org-log.ts; the port: ../port/org-log.ts). */
import { sql } from "./kysely";
import type { OrgId } from "../../domain/ids";
import { decideOrgLogStep, type OrgLogEntry, type OrgLogHead } from "../../domain/orgs/log";
import type { ArgsOf, OrgLogStore } from "../port";
import type { Db, SqlContext } from "./context";

/** The organization's row locked: its log's appends and its removals one at a time. */
export async function lockOrg(trx: Db, orgId: OrgId): Promise<void> {
  await trx
    .updateTable("orgs")
    .set({ name: sql`name` })
    .where("org_id", "=", orgId)
    .execute();
}

async function headOf(trx: Db, orgId: OrgId): Promise<OrgLogHead> {
  const row = await trx
    .selectFrom("org_log")
    .select(["seq", "hash"])
    .where("org_id", "=", orgId)
    .orderBy("seq", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? { seq: Number(row.seq), hash: row.hash } : null;
}

/** Appends `entry` after the stored head; the caller holds the organization's lock (`lockOrg`). */
export async function appendOrgLink(trx: Db, orgId: OrgId, entry: OrgLogEntry, field: string, now: string): Promise<void> {
  decideOrgLogStep(await headOf(trx, orgId), entry, field);
  await trx
    .insertInto("org_log")
    .values({ org_id: orgId, seq: entry.seq, hash: entry.hash, link: JSON.stringify(entry.link), created_at: now })
    .execute();
}

export class SqlOrgLog implements OrgLogStore {
  constructor(private readonly c: SqlContext) {}

  async links(orgId: OrgId): Promise<unknown[]> {
    const rows = await this.c.db.selectFrom("org_log").select("link").where("org_id", "=", orgId).orderBy("seq").execute();
    return rows.map((r) => JSON.parse(r.link) as unknown);
  }

  async append({ orgId, entry, field, now }: ArgsOf<OrgLogStore["append"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await lockOrg(trx, orgId);
      await appendOrgLink(trx, orgId, entry, field, now);
    });
  }
}
