/**
 * Sends on MongoDB (the port: ../port/sends.ts; SQL: ../sql/sends.ts). What the server keeps of
 * each is in `sends`, its sealed parts in `send_parts`, one document each. Every write of a send
 * first writes its document (`lockSend`), as SQL locks its row, and decides with the `plan*` of
 * lib/domain/sends/decisions.ts: of many opens at once, each sees the views the one before it
 * counted, and the others conflict and run again on that. New sends in one organization all write
 * its document, so that the quota's sum and the member's count are read and the new send's room
 * taken with no other new send between.
 */
import { Binary, type ClientSession, type Filter } from "mongodb";
import type { OrgId, SendId, UserId } from "../../domain/ids";
import {
  planSendCreate,
  planSendDelete,
  planSendFinish,
  planSendOpen,
  planSendPartRead,
  planSendPartWrite,
} from "../../domain/sends/decisions";
import { sendIdTaken, sendNotFound } from "../../domain/sends/refusals";
import type { ArgsOf, OpenedSend, SendGate, SendRecord, SendStatus, SendStore } from "../port";
import type { MongoContext } from "./context";
import { sendPartKey, sendStateOf, toSendRecord, type SendDoc } from "./documents";
import { isDuplicateKey } from "./errors";
import { writeOutbox } from "./outbox";

/** Sends the sweeper looks at per round. */
const PURGE_BATCH = 500;

/** Writes the send's document (the lock: a concurrent write of this send conflicts and runs again on the new state) and answers it. */
function lockSend(c: MongoContext, session: ClientSession, sendId: SendId): Promise<SendDoc | null> {
  return c.sends.findOneAndUpdate({ _id: sendId }, { $inc: { writeSeq: 1 } }, { session, returnDocument: "after" });
}

/** Each stored part's sealed size, by index. */
async function partSizes(c: MongoContext, session: ClientSession, sendId: SendId): Promise<Map<number, number>> {
  const docs = await c.sendParts
    .find({ sendId }, { session, projection: { _id: 0, idx: 1, sealedBytes: 1 } })
    .sort({ idx: 1 })
    .toArray();
  return new Map(docs.map((d) => [d.idx, d.sealedBytes]));
}

/** Sealed bytes the organization's sends hold until the sweeper deletes them, expired ones included (a send whose parts are gone holds none). */
async function orgBytes(c: MongoContext, session: ClientSession, orgId: OrgId, now: string): Promise<number> {
  const [sum] = await c.sends
    .aggregate<{ bytes: number }>(
      [
        { $match: { orgId, $or: [{ partsGoneAt: null }, { partsGoneAt: { $gt: now } }] } },
        { $group: { _id: null, bytes: { $sum: "$bytes" } } },
      ],
      { session },
    )
    .toArray();
  return sum?.bytes ?? 0;
}

/** Deletes sends and their parts, in the caller's transaction. */
async function dropSends(c: MongoContext, session: ClientSession, ids: readonly SendId[]): Promise<void> {
  if (ids.length === 0) return;
  await c.sendParts.deleteMany({ sendId: { $in: [...ids] } }, { session });
  await c.sends.deleteMany({ _id: { $in: [...ids] } }, { session });
}

/** Deletes the user's sends and their parts, in the caller's transaction (a member taken out of their organization). */
export async function dropSendsOf(c: MongoContext, session: ClientSession, ownerId: UserId): Promise<void> {
  const theirs = await c.sends.find({ ownerId }, { session, projection: { _id: 1 } }).toArray();
  const ids = theirs.map((d) => d._id);
  await dropSends(c, session, ids);
}

/** The part's bytes on their own: the driver's Binary is a view into its whole reply. */
const bytesOf = (data: Binary): Uint8Array => new Uint8Array(data.value());

export class MongoSends implements SendStore {
  constructor(private readonly c: MongoContext) {}

  async createSend(args: ArgsOf<SendStore["createSend"]>): Promise<SendStatus> {
    const { actorId, orgId, sendId, parts, bytes, lifetimeMs, now } = args;
    return this.c.tx(async (session) => {
      // The organization's document written: a new send in it at once conflicts, and runs again on this one's room taken.
      await this.c.orgs.updateOne({ _id: orgId }, { $inc: { sendSeq: 1 } }, { session });
      const snapshot = {
        idTaken: (await this.c.sends.findOne({ _id: sendId }, { session, projection: { _id: 1 } })) !== null,
        ownerLive: await this.c.sends.countDocuments(
          { ownerId: actorId, expiresAt: { $gt: now }, $or: [{ partsGoneAt: null }, { partsGoneAt: { $gt: now } }] },
          { session },
        ),
        orgBytes: await orgBytes(this.c, session, orgId, now),
      };
      planSendCreate(snapshot, { parts, bytes, lifetimeMs }, args.limits, args.policy);
      const doc: SendDoc = {
        _id: sendId,
        orgId,
        ownerId: actorId,
        parts,
        bytes,
        maxViews: args.maxViews,
        views: 0,
        accessHash: args.accessHash,
        passwordHash: args.passwordHash,
        ownerNote: args.ownerNote,
        complete: false,
        createdAt: now,
        expiresAt: new Date(Date.parse(now) + lifetimeMs).toISOString(),
        partsGoneAt: null,
      };
      try {
        await this.c.sends.insertOne(doc, { session });
      } catch (err) {
        // An id taken meanwhile by another organization's send (whose makes write another document).
        if (isDuplicateKey(err)) throw sendIdTaken();
        throw err;
      }
      await writeOutbox(this.c, session, args.events);
      return { ...toSendRecord(doc), received: [] };
    });
  }

  async putPart({ actorId, sendId, index, data, now }: ArgsOf<SendStore["putPart"]>): Promise<void> {
    await this.c.tx(async (session) => {
      const doc = await lockSend(this.c, session, sendId);
      let others = 0;
      for (const [i, size] of await partSizes(this.c, session, sendId)) if (i !== index) others += size;
      planSendPartWrite(sendStateOf(doc), actorId, Date.parse(now), { index, size: data.length, others });
      await this.c.sendParts.updateOne(
        { _id: sendPartKey(sendId, index) },
        { $set: { sendId, idx: index, sealedBytes: data.length, data: new Binary(data) } },
        { session, upsert: true },
      );
    });
  }

  async finishSend({ actorId, sendId, now, events }: ArgsOf<SendStore["finishSend"]>): Promise<SendRecord> {
    return this.c.tx(async (session) => {
      const doc = await lockSend(this.c, session, sendId);
      if (!planSendFinish(sendStateOf(doc), actorId, Date.parse(now), await partSizes(this.c, session, sendId))) return toSendRecord(doc!);
      await this.c.sends.updateOne({ _id: sendId }, { $set: { complete: true } }, { session });
      await writeOutbox(this.c, session, events);
      return toSendRecord({ ...doc!, complete: true });
    });
  }

  async listSends({ actorId, now }: ArgsOf<SendStore["listSends"]>): Promise<SendRecord[]> {
    const docs = await this.c.sends
      .find({ ownerId: actorId, expiresAt: { $gt: now } })
      .sort({ createdAt: -1, _id: 1 })
      .toArray();
    return docs.map((d) => toSendRecord(d, now));
  }

  async deleteSend({ actorId, sendId, events }: ArgsOf<SendStore["deleteSend"]>): Promise<void> {
    await this.c.tx(async (session) => {
      planSendDelete(sendStateOf(await lockSend(this.c, session, sendId)), actorId);
      await dropSends(this.c, session, [sendId]);
      await writeOutbox(this.c, session, events);
    });
  }

  async sendGate({ sendId }: ArgsOf<SendStore["sendGate"]>): Promise<SendGate | null> {
    const d = await this.c.sends.findOne({ _id: sendId });
    return d ? { orgId: d.orgId, accessHash: d.accessHash, passwordHash: d.passwordHash, state: sendStateOf(d)! } : null;
  }

  async openSend({ sendId, now, policy, events }: ArgsOf<SendStore["openSend"]>): Promise<OpenedSend> {
    return this.c.tx(async (session) => {
      const doc = await lockSend(this.c, session, sendId);
      const plan = planSendOpen(sendStateOf(doc), Date.parse(now), policy);
      const d = doc!;
      const header = await this.c.sendParts.findOne({ _id: sendPartKey(sendId, 0) }, { session, projection: { data: 1 } });
      if (!header) throw sendNotFound();
      const gone = plan.partsGoneAtMs === null ? null : new Date(plan.partsGoneAtMs).toISOString();
      await this.c.sends.updateOne({ _id: sendId }, { $set: { views: plan.views, partsGoneAt: gone } }, { session });
      // The last view of a send of one part: the header answered now is all of it.
      if (gone !== null && gone <= now) await this.c.sendParts.deleteMany({ sendId }, { session });
      await writeOutbox(this.c, session, events({ ownerId: d.ownerId, orgId: d.orgId }));
      return {
        sendId,
        orgId: d.orgId,
        ownerId: d.ownerId,
        parts: d.parts,
        bytes: d.bytes,
        expiresAt: d.expiresAt,
        viewsLeft: plan.viewsLeft,
        header: bytesOf(header.data),
      };
    });
  }

  async readPart({ sendId, index, now, accessOk, policy }: ArgsOf<SendStore["readPart"]>): Promise<Uint8Array> {
    planSendPartRead(sendStateOf(await this.c.sends.findOne({ _id: sendId })), Date.parse(now), index, accessOk, policy);
    // Read after the check: a part is the send's, or gone with it.
    const part = await this.c.sendParts.findOne({ _id: sendPartKey(sendId, index) }, { projection: { data: 1 } });
    if (!part) throw sendNotFound();
    return bytesOf(part.data);
  }

  purgeSends({ now, staleBefore }: ArgsOf<SendStore["purgeSends"]>): Promise<number> {
    return purgeSends(this.c, now, staleBefore);
  }
}

/**
 * Deletes expired sends and unfinished ones begun before `staleBefore`, one transaction each (a
 * send's parts may be many megabytes), then the parts of sends whose last view was taken.
 */
async function purgeSends(c: MongoContext, now: string, staleBefore: string): Promise<number> {
  const doomed: Filter<SendDoc> = { $or: [{ expiresAt: { $lte: now } }, { complete: false, createdAt: { $lt: staleBefore } }] };
  let total = 0;
  for (;;) {
    const batch = await c.sends
      .find(doomed, { projection: { _id: 1 } })
      .sort({ expiresAt: 1 })
      .limit(PURGE_BATCH)
      .toArray();
    for (const { _id: sendId } of batch) {
      const dropped = await c.tx(async (session) => {
        // Still doomed: a finish meanwhile wrote the document, and this delete conflicts with it.
        if (!(await c.sends.findOne({ _id: sendId, ...doomed }, { session, projection: { _id: 1 } }))) return false;
        await dropSends(c, session, [sendId]);
        return true;
      });
      if (dropped) total += 1;
    }
    if (batch.length < PURGE_BATCH) break;
  }
  // Parts whose last view was taken: the send stays listed to its sender until it expires. No
  // transaction: such a send is finished (no part is written) and opens no more (no part is read).
  const gone = c.sends.find({ partsGoneAt: { $lte: now } }, { projection: { _id: 1 } }).batchSize(PURGE_BATCH);
  let ids: SendId[] = [];
  for await (const { _id: sendId } of gone) {
    ids.push(sendId);
    if (ids.length === PURGE_BATCH) {
      await c.sendParts.deleteMany({ sendId: { $in: ids } });
      ids = [];
    }
  }
  if (ids.length > 0) await c.sendParts.deleteMany({ sendId: { $in: ids } });
  return total;
}
