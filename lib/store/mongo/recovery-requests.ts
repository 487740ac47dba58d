/**
 * Recovery requests for any address on MongoDB, as the SQL adapter stores them (../sql/recovery.ts):
 * a decoy's document as a real one's, the same reads and writes for any address
 * (lib/domain/accounts/recovery-requests.ts). The address's lock is a document of `locks`, written
 * first: two requests for one address at once conflict, and one retries.
 */
import type { ClientSession } from "mongodb";
import type { UserId } from "../../domain/ids";
import { decideRequestSlot, type NewRecoveryRequest, type RecoveryAsk, type RecoveryTarget } from "../../domain/accounts/recovery-requests";
import type { DomainEvent } from "../../domain/audit/events";
import type { MongoContext } from "./context";
import { recoveryRequestDoc, toRecoveryAsk } from "./documents";
import { writeOutbox } from "./outbox";

/** No account has this id: what an address without one looks its enrolment up by. */
const NO_USER = "00000000-0000-4000-8000-000000000000" as UserId;

/** The account of an address and its enrolment: two reads, whatever the address. */
export async function findRecoveryTargetIn(c: MongoContext, email: string): Promise<RecoveryTarget | null> {
  const user = await c.users.findOne({ email }, { projection: { _id: 1, orgId: 1, kdf: 1, removedAt: 1 } });
  const enrolment = await c.recoveryEnrolments.findOne({ _id: user?._id ?? NO_USER }, { projection: { enrolmentId: 1, kdfSalt: 1 } });
  if (!user) return null;
  return {
    userId: user._id,
    orgId: user.orgId,
    removed: user.removedAt != null,
    kdfSalt: user.kdf.salt,
    enrolment: enrolment ? { enrolmentId: enrolment.enrolmentId, kdfSalt: enrolment.kdfSalt } : null,
  };
}

/** Stores a request, real or decoy, under its address's lock (`decideRequestSlot`). */
export async function startRecoveryRequestIn(
  c: MongoContext,
  r: NewRecoveryRequest,
  events: readonly DomainEvent[] | undefined,
): Promise<void> {
  await c.tx(async (session: ClientSession) => {
    await c.locks.updateOne({ _id: `recovery:${r.addressKey}` }, { $inc: { seq: 1 } }, { session, upsert: true });
    const open = await c.recoveryRequests
      .find(
        { addressKey: r.addressKey, status: "pending", expiresAt: { $gt: r.createdAt } },
        { session, projection: { _id: 1, clientKey: 1, bindingHash: 1 } },
      )
      .toArray();
    const approved = new Set(
      (
        await c.recoveryApprovals.find({ requestId: { $in: open.map((x) => x._id) } }, { session, projection: { requestId: 1 } }).toArray()
      ).map((a) => a.requestId),
    );
    const slot = decideRequestSlot(
      open.map((x) => ({
        requestId: x._id,
        clientKey: x.clientKey ?? "",
        bindingHash: x.bindingHash ?? null,
        approved: approved.has(x._id),
      })),
      r,
    );
    if (slot.replaces.length > 0) {
      await c.recoveryRequests.updateMany(
        { _id: { $in: slot.replaces }, status: "pending" },
        { $set: { status: "cancelled", endedAt: r.createdAt }, $inc: { writeSeq: 1 } },
        { session },
      );
    }
    await writeOutbox(c, session, events);
    await c.recoveryRequests.insertOne(recoveryRequestDoc(r, slot.held), { session });
  });
}

/** Any stored request, a decoy's too (by its id). */
export async function findRecoveryAskIn(c: MongoContext, requestId: string): Promise<RecoveryAsk | null> {
  const doc = await c.recoveryRequests.findOne({ _id: requestId });
  return doc ? toRecoveryAsk(doc) : null;
}
