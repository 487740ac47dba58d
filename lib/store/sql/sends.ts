/**
 * Sends on SQL (the port: ../port/sends.ts; MongoDB: ../mongo/sends.ts). Every write locks the
 * send's row and decides with the `plan*` of lib/domain/sends/decisions.ts; a new send takes its
 * organization's named lock besides, so that the quota's sum and the member's count are read and the
 * new send's room taken with no other new send between. An open takes the row's exclusive lock: of
 * many opens at once, each sees the views the one before it counted.
 */
import type { OrgId, SendId, UserId } from "../../domain/ids";
import {
  planSendCreate,
  planSendDelete,
  planSendFinish,
  planSendOpen,
  planSendPartRead,
  planSendPartWrite,
  type SendState,
} from "../../domain/sends/decisions";
import { sendIdTaken, sendNotFound } from "../../domain/sends/refusals";
import type { ArgsOf, OpenedSend, SendGate, SendRecord, SendStatus, SendStore } from "../port";
import type { Db, SqlContext } from "./context";
import { writeOutbox } from "./outbox";
import type { SendsTable } from "./schema";

/** Sends the sweeper deletes per transaction. */
const PURGE_BATCH = 500;

const toRecord = (r: SendsTable, now?: string): SendRecord => ({
  sendId: r.send_id,
  ownerId: r.owner_id,
  orgId: r.org_id,
  parts: Number(r.parts),
  bytes: Number(r.bytes),
  maxViews: r.max_views === null ? null : Number(r.max_views),
  views: Number(r.views),
  hasPassword: r.password_hash !== null,
  ownerNote: r.owner_note,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  complete: Number(r.complete) === 1,
  partsGone: r.parts_gone_at !== null && (now === undefined || r.parts_gone_at <= now),
});

const stateOf = (r: SendsTable | undefined): SendState | undefined =>
  r && {
    ownerId: r.owner_id,
    parts: Number(r.parts),
    bytes: Number(r.bytes),
    complete: Number(r.complete) === 1,
    expiresAtMs: Date.parse(r.expires_at),
    maxViews: r.max_views === null ? null : Number(r.max_views),
    views: Number(r.views),
    partsGoneAtMs: r.parts_gone_at === null ? null : Date.parse(r.parts_gone_at),
  };

async function sendRow(db: Db, c: SqlContext, sendId: SendId, lock?: "update" | "share") {
  const q = db.selectFrom("sends").selectAll().where("send_id", "=", sendId);
  return (lock ? c.engine.rowLock(q, lock) : q).executeTakeFirst();
}

/** Each stored part's sealed size, by index. */
async function partSizes(db: Db, sendId: SendId): Promise<Map<number, number>> {
  const rows = await db.selectFrom("send_parts").select(["idx", "sealed_bytes"]).where("send_id", "=", sendId).orderBy("idx").execute();
  return new Map(rows.map((r) => [Number(r.idx), Number(r.sealed_bytes)]));
}

export class SqlSends implements SendStore {
  constructor(private readonly c: SqlContext) {}

  async createSend(args: ArgsOf<SendStore["createSend"]>): Promise<SendStatus> {
    const { actorId, orgId, sendId, parts, bytes, lifetimeMs, now } = args;
    return this.c.tx(async (trx) => {
      await this.c.engine.lockName(trx, `send-quota:${orgId}`);
      const snapshot = {
        idTaken: (await sendRow(trx, this.c, sendId)) !== undefined,
        ownerLive: await this.count(trx, "owner_id", actorId, now),
        orgBytes: await this.orgBytes(trx, orgId, now),
      };
      planSendCreate(snapshot, { parts, bytes, lifetimeMs }, args.limits, args.policy);
      const row: SendsTable = {
        send_id: sendId,
        org_id: orgId,
        owner_id: actorId,
        parts,
        bytes,
        max_views: args.maxViews,
        views: 0,
        access_hash: args.accessHash,
        password_hash: args.passwordHash,
        owner_note: args.ownerNote,
        complete: 0,
        created_at: now,
        expires_at: new Date(Date.parse(now) + lifetimeMs).toISOString(),
        parts_gone_at: null,
      };
      // An id taken meanwhile by another organization's send (whose makes hold another lock).
      const res = await trx
        .insertInto("sends")
        .values(row)
        .onConflict((oc) => oc.column("send_id").doNothing())
        .executeTakeFirst();
      if (Number(res.numInsertedOrUpdatedRows) !== 1) throw sendIdTaken();
      await writeOutbox(trx, args.events);
      return { ...toRecord(row), received: [] };
    });
  }

  /** The member's live sends: not expired, and not used up (a used-up one holds no parts). */
  private async count(db: Db, column: "owner_id", value: UserId, now: string): Promise<number> {
    const r = await db
      .selectFrom("sends")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where(column, "=", value)
      .where("expires_at", ">", now)
      .where((eb) => eb.or([eb("parts_gone_at", "is", null), eb("parts_gone_at", ">", now)]))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Sealed bytes the organization's sends hold until the sweeper deletes them, expired ones included (a send whose parts are gone holds none). */
  private async orgBytes(db: Db, orgId: OrgId, now: string): Promise<number> {
    const r = await db
      .selectFrom("sends")
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>("bytes"), eb.lit(0)).as("bytes"))
      .where("org_id", "=", orgId)
      .where((eb) => eb.or([eb("parts_gone_at", "is", null), eb("parts_gone_at", ">", now)]))
      .executeTakeFirstOrThrow();
    return Number(r.bytes);
  }

  async putPart({ actorId, sendId, index, data, now }: ArgsOf<SendStore["putPart"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      const row = await sendRow(trx, this.c, sendId, "update");
      const sizes = await partSizes(trx, sendId);
      let others = 0;
      for (const [i, size] of sizes) if (i !== index) others += size;
      planSendPartWrite(stateOf(row), actorId, Date.parse(now), { index, size: data.length, others });
      const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      await trx
        .insertInto("send_parts")
        .values({ send_id: sendId, idx: index, sealed_bytes: data.length, data: bytes })
        .onConflict((oc) => oc.columns(["send_id", "idx"]).doUpdateSet({ sealed_bytes: data.length, data: bytes }))
        .execute();
    });
  }

  async finishSend({ actorId, sendId, now, events }: ArgsOf<SendStore["finishSend"]>): Promise<SendRecord> {
    return this.c.tx(async (trx) => {
      const row = await sendRow(trx, this.c, sendId, "update");
      if (!planSendFinish(stateOf(row), actorId, Date.parse(now), await partSizes(trx, sendId))) return toRecord(row!);
      await trx.updateTable("sends").set({ complete: 1 }).where("send_id", "=", sendId).execute();
      await writeOutbox(trx, events);
      return toRecord({ ...row!, complete: 1 });
    });
  }

  async listSends({ actorId, now }: ArgsOf<SendStore["listSends"]>): Promise<SendRecord[]> {
    const rows = await this.c.db
      .selectFrom("sends")
      .selectAll()
      .where("owner_id", "=", actorId)
      .where("expires_at", ">", now)
      .orderBy("created_at", "desc")
      .orderBy("send_id")
      .execute();
    return rows.map((r) => toRecord(r, now));
  }

  async deleteSend({ actorId, sendId, events }: ArgsOf<SendStore["deleteSend"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      planSendDelete(stateOf(await sendRow(trx, this.c, sendId, "update")), actorId);
      await trx.deleteFrom("send_parts").where("send_id", "=", sendId).execute();
      await trx.deleteFrom("sends").where("send_id", "=", sendId).execute();
      await writeOutbox(trx, events);
    });
  }

  async sendGate({ sendId }: ArgsOf<SendStore["sendGate"]>): Promise<SendGate | null> {
    const r = await sendRow(this.c.db, this.c, sendId);
    return r ? { orgId: r.org_id, accessHash: r.access_hash, passwordHash: r.password_hash, state: stateOf(r)! } : null;
  }

  async openSend({ sendId, now, policy, events }: ArgsOf<SendStore["openSend"]>): Promise<OpenedSend> {
    return this.c.tx(async (trx) => {
      const row = await sendRow(trx, this.c, sendId, "update");
      const plan = planSendOpen(stateOf(row), Date.parse(now), policy);
      const r = row!;
      const header = await trx
        .selectFrom("send_parts")
        .select("data")
        .where("send_id", "=", sendId)
        .where("idx", "=", 0)
        .executeTakeFirst();
      if (!header) throw sendNotFound();
      const gone = plan.partsGoneAtMs === null ? null : new Date(plan.partsGoneAtMs).toISOString();
      await trx.updateTable("sends").set({ views: plan.views, parts_gone_at: gone }).where("send_id", "=", sendId).execute();
      // The last view of a send of one part: the header answered now is all of it.
      if (gone !== null && gone <= now) await trx.deleteFrom("send_parts").where("send_id", "=", sendId).execute();
      await writeOutbox(trx, events({ ownerId: r.owner_id, orgId: r.org_id }));
      return {
        sendId,
        orgId: r.org_id,
        ownerId: r.owner_id,
        parts: Number(r.parts),
        bytes: Number(r.bytes),
        expiresAt: r.expires_at,
        viewsLeft: plan.viewsLeft,
        header: header.data,
      };
    });
  }

  async readPart({ sendId, index, now, accessOk, policy }: ArgsOf<SendStore["readPart"]>): Promise<Uint8Array> {
    planSendPartRead(stateOf(await sendRow(this.c.db, this.c, sendId)), Date.parse(now), index, accessOk, policy);
    // Read after the check: a part is the send's, or gone with it.
    const part = await this.c.db
      .selectFrom("send_parts")
      .select("data")
      .where("send_id", "=", sendId)
      .where("idx", "=", index)
      .executeTakeFirst();
    if (!part) throw sendNotFound();
    return part.data;
  }

  async purgeSends({ now, staleBefore }: ArgsOf<SendStore["purgeSends"]>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.c.tx(async (trx) => {
        const q = trx
          .selectFrom("sends")
          .select("send_id")
          .where((eb) => eb.or([eb("expires_at", "<=", now), eb.and([eb("complete", "=", 0), eb("created_at", "<", staleBefore)])]))
          .orderBy("expires_at")
          .limit(PURGE_BATCH);
        const ids = (await this.c.engine.rowLock(q, "update").execute()).map((r) => r.send_id);
        if (ids.length > 0) {
          await trx.deleteFrom("send_parts").where("send_id", "in", ids).execute();
          await trx.deleteFrom("sends").where("send_id", "in", ids).execute();
        }
        return ids.length;
      });
      total += n;
      if (n < PURGE_BATCH) break;
    }
    // Parts whose last view was taken: the send stays listed to its sender until it expires.
    const gone = this.c.db.selectFrom("sends").select("send_id").where("parts_gone_at", "<=", now);
    await this.c.db.deleteFrom("send_parts").where("send_id", "in", gone).execute();
    return total;
  }
}
