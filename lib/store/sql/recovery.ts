/** Account recovery's rows on SQL, for ./security.ts and a password change that completes a recovery (./accounts.ts). */
import type { UserId } from "../../domain/ids";
import type { RecoveryRequest } from "../../domain/accounts/recovery";
import type { Db } from "./context";
import type { RecoveryRequestsTable } from "./schema";

export function toRequest(r: RecoveryRequestsTable): RecoveryRequest {
  return {
    requestId: r.request_id,
    userId: r.user_id,
    orgId: r.org_id,
    enrolmentId: r.enrolment_id,
    publicKey: r.public_key,
    tokenHash: r.token_hash,
    status: r.status,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    ...(r.ended_at !== null && { endedAt: r.ended_at }),
    ...(r.session_id !== null && { sessionId: r.session_id }),
    ...(r.opened_at !== null && { openedAt: r.opened_at }),
  };
}

/** Removes an enrolment (the user's, or the one named), its shares, and cancels its requests still pending or opened. */
export async function dropEnrolment(trx: Db, enrolmentId: string, at: string, userId?: UserId): Promise<void> {
  await trx
    .updateTable("recovery_requests")
    .set({ status: "cancelled", ended_at: at })
    .where("enrolment_id", "=", enrolmentId)
    .where("status", "in", ["pending", "opened"])
    .execute();
  await trx.deleteFrom("recovery_shares").where("enrolment_id", "=", enrolmentId).execute();
  if (userId !== undefined) await trx.deleteFrom("recovery_enrolments").where("user_id", "=", userId).execute();
  else await trx.deleteFrom("recovery_enrolments").where("enrolment_id", "=", enrolmentId).execute();
}

/**
 * Completes an opened request (the new password set) in the caller's transaction: the secret was
 * rebuilt and the password it protected is gone, so the enrolment is spent (deleted, its other
 * requests cancelled). False when the request is not opened (cancelled meanwhile, or completed).
 */
export async function completeRecoveryIn(trx: Db, requestId: string, at: string): Promise<boolean> {
  const r = await trx
    .updateTable("recovery_requests")
    .set({ status: "completed", ended_at: at })
    .where("request_id", "=", requestId)
    .where("status", "=", "opened")
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) return false;
  const req = await trx
    .selectFrom("recovery_requests")
    .select(["enrolment_id"])
    .where("request_id", "=", requestId)
    .executeTakeFirstOrThrow();
  await dropEnrolment(trx, req.enrolment_id, at);
  return true;
}
