/** Account recovery's rows on SQL, for ./security.ts and a password change that completes a recovery (./accounts.ts). */
import type { UserId } from "../../domain/ids";
import type { RecoveryRequest } from "../../domain/accounts/recovery";
import { decideRequestSlot, type NewRecoveryRequest, type RecoveryAsk, type RecoveryTarget } from "../../domain/accounts/recovery-requests";
import type { DomainEvent } from "../../domain/audit/events";
import type { Kdf } from "../../domain/types";
import type { Db, SqlContext } from "./context";
import { writeOutbox } from "./outbox";
import type { RecoveryRequestsTable } from "./schema";

/** An account's request row as the rules read it (rows of decoys are never read this way: their queries name an account). */
export function toRequest(r: RecoveryRequestsTable): RecoveryRequest {
  if (r.user_id === null || r.org_id === null || r.enrolment_id === null) throw new Error(`recovery request ${r.request_id} is a decoy's`);
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
  // Only an account's request opens (a decoy's never has approvals): it names its enrolment.
  if (req.enrolment_id !== null) await dropEnrolment(trx, req.enrolment_id, at);
  return true;
}

/** No account has this id: what an address without one looks its enrolment up by, so that every address takes the same statements. */
const NO_USER = "00000000-0000-4000-8000-000000000000" as UserId;

/** The account of an address and its enrolment: two statements, whatever the address (recovery-requests.ts). */
export async function findRecoveryTargetIn(db: Db, email: string): Promise<RecoveryTarget | null> {
  const user = await db
    .selectFrom("users")
    .select(["user_id", "org_id", "kdf", "removed_at"])
    .where("email", "=", email)
    .executeTakeFirst();
  const enrolment = await db
    .selectFrom("recovery_enrolments")
    .select(["enrolment_id", "kdf_salt"])
    .where("user_id", "=", user?.user_id ?? NO_USER)
    .executeTakeFirst();
  if (!user) return null;
  return {
    userId: user.user_id,
    orgId: user.org_id,
    removed: user.removed_at !== null,
    kdfSalt: (JSON.parse(user.kdf) as Kdf).salt,
    enrolment: enrolment ? { enrolmentId: enrolment.enrolment_id, kdfSalt: enrolment.kdf_salt } : null,
  };
}

/** Stores a request, real or decoy, under its address's lock: the same statements for any address (`decideRequestSlot`). */
export async function startRecoveryRequestIn(
  c: SqlContext,
  r: NewRecoveryRequest,
  events: readonly DomainEvent[] | undefined,
): Promise<void> {
  await c.tx(async (trx) => {
    await c.engine.lockName(trx, `recovery:${r.addressKey}`);
    const live = await trx
      .selectFrom("recovery_requests as r")
      .select(["r.request_id", "r.client_key", "r.binding_hash"])
      .select((eb) =>
        eb
          .exists(eb.selectFrom("recovery_approvals as a").select("a.trustee_id").whereRef("a.request_id", "=", "r.request_id"))
          .as("approved"),
      )
      .where("r.address_key", "=", r.addressKey)
      .where("r.status", "=", "pending")
      .where("r.expires_at", ">", r.createdAt)
      .execute();
    const slot = decideRequestSlot(
      live.map((x) => ({ requestId: x.request_id, clientKey: x.client_key, bindingHash: x.binding_hash, approved: Boolean(x.approved) })),
      r,
    );
    if (slot.replaces.length > 0) {
      await trx
        .updateTable("recovery_requests")
        .set({ status: "cancelled", ended_at: r.createdAt })
        .where("request_id", "in", slot.replaces)
        .where("status", "=", "pending")
        .execute();
    }
    await writeOutbox(trx, events);
    await trx
      .insertInto("recovery_requests")
      .values({
        request_id: r.requestId,
        user_id: r.account?.userId ?? null,
        org_id: r.account?.orgId ?? null,
        enrolment_id: r.account?.enrolmentId ?? null,
        address_key: r.addressKey,
        client_key: r.clientKey,
        binding_hash: r.bindingHash,
        public_key: r.publicKey,
        token_hash: r.tokenHash,
        // Held: stored ended, never shown to a trustee; its requester sees no difference.
        status: slot.held ? "cancelled" : "pending",
        created_at: r.createdAt,
        expires_at: r.expiresAt,
        ended_at: slot.held ? r.createdAt : null,
        session_id: null,
        opened_at: null,
      })
      .execute();
  });
}

/** Any stored request, a decoy's too (by its id). */
export async function findRecoveryAskIn(db: Db, requestId: string): Promise<RecoveryAsk | null> {
  const r = await db.selectFrom("recovery_requests").selectAll().where("request_id", "=", requestId).executeTakeFirst();
  if (!r) return null;
  return {
    requestId: r.request_id,
    tokenHash: r.token_hash,
    status: r.status,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    request: r.user_id === null ? null : toRequest(r),
  };
}
