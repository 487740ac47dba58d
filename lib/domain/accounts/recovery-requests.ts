/**
 * Recovery requests as whoever makes one sees them (docs/design/account-recovery.md, "What a
 * stranger learns"). A request for any address, enrolled or not, is stored, counted against the
 * address's and the client's slots, recorded in the audit log and answered alike; until a trustee
 * approves it, polling it shows the same open request, k and all, whatever happened to it. So
 * neither the answers, nor the status over time, nor the work the server does tells a stranger
 * whether an address is enrolled. A request is bound to the device that made it: no other
 * device's request ever ends it. What its trustees do with it is recovery.ts.
 */
import type { OrgId, UserId } from "../ids";
import type { EventSubjects } from "../audit/events";
import type { RecoveryRequest, RecoveryStatus } from "./recovery";
import { recoveryPollsTooMany, recoveryTokenWrong, tooFewApprovals } from "./refusals";
import { retryAfterSec } from "./address-limits";

/** What the store found for an address when a request for it came in: its account, and that account's enrolment. */
export interface RecoveryTarget {
  userId: UserId;
  orgId: OrgId;
  removed: boolean;
  /** The KDF salt of the account's password now. */
  kdfSalt: string;
  /** The account's enrolment, and the salt of the password it was made under; null without one. */
  enrolment: { enrolmentId: string; kdfSalt: string } | null;
}

/** The account and enrolment a request is for; none for a decoy. */
export interface RequestAccount {
  userId: UserId;
  orgId: OrgId;
  enrolmentId: string;
}

/** A new request, real or decoy, as the store writes it. */
export interface NewRecoveryRequest {
  requestId: string;
  /** The address asked for, as a keyed hash (the server's secret): the slots are counted by it. */
  addressKey: string;
  /** The client address it came from, as a keyed hash (of its netKey). */
  clientKey: string;
  /** The hash of the secret the device started it with, when it sent one: a later request with the same secret replaces it. */
  bindingHash: string | null;
  /** Null: a decoy (no account, or none enrolled under its password); no trustee ever sees it. */
  account: RequestAccount | null;
  publicKey: string;
  tokenHash: string;
  createdAt: string;
  expiresAt: string;
}

/** A stored request, as the routes that name it by its secret read it (any address). */
export interface RecoveryAsk {
  requestId: string;
  tokenHash: string;
  status: RecoveryStatus;
  createdAt: string;
  expiresAt: string;
  /** The account's request; null for a decoy. */
  request: RecoveryRequest | null;
}

/** A request of the address still open, as its slots count it. */
export interface LiveAsk {
  requestId: string;
  clientKey: string;
  bindingHash: string | null;
  /** A trustee approved it: a trustee checked its code with the account's owner. */
  approved: boolean;
}

/** Open requests an address may have that no trustee approved yet: the most its trustees are asked about at once. */
export const MAX_OPEN_REQUESTS_PER_ADDRESS = 5;
/** Of those, the most from one client address (by its netKey). */
export const MAX_OPEN_REQUESTS_PER_CLIENT = 2;
/** The k every request shows until a trustee approves it: the fewest any enrolment needs. */
export const SHOWN_THRESHOLD = 2;
/** Polls and sign-in attempts one request's secret may make in an hour (its own budget: no one else's traffic uses it up). */
export const RECOVERY_POLLS_PER_HOUR = 120;
export const RECOVERY_POLL_WINDOW_MS = 3_600_000;

/**
 * Whom the audit event of a request for no enrolled account names: an organization and a user no
 * account has. The event is written, published and recorded as a real one is (the same work), in
 * an audit chain no one can read.
 */
export const NO_ENROLMENT: EventSubjects = {
  actorId: "6b1f0d6e-4c0a-4f57-9a53-2f1e7a5c9d10" as UserId,
  orgId: "6b1f0d6e-4c0a-4f57-9a53-2f1e7a5c9d10" as OrgId,
  targetUserId: "6b1f0d6e-4c0a-4f57-9a53-2f1e7a5c9d10" as UserId,
};

/** The ids of a request's new row, its secret's hash, the keys it is counted by and its one-time key: what the service made. */
export type RequestForm = Omit<NewRecoveryRequest, "account">;

/**
 * A request for an address: for the account's current enrolment when the account is there, in its
 * organization, and enrolled under its password now; otherwise a decoy. Both are stored and
 * recorded alike; only the account (and so the audit event's subjects) differs.
 */
export function planRecoveryRequest(
  target: RecoveryTarget | null,
  form: RequestForm,
): { request: NewRecoveryRequest; subjects: EventSubjects } {
  const enrolled = target !== null && !target.removed && target.enrolment !== null && target.enrolment.kdfSalt === target.kdfSalt;
  if (!enrolled) return { request: { ...form, account: null }, subjects: NO_ENROLMENT };
  const account = { userId: target.userId, orgId: target.orgId, enrolmentId: target.enrolment!.enrolmentId };
  return { request: { ...form, account }, subjects: { actorId: target.userId, orgId: target.orgId, targetUserId: target.userId } };
}

/**
 * Where a new request goes among the address's open ones (`live`), decided under the address's
 * lock. It replaces only requests started with its own binding secret (the same device starting
 * over); it never ends another device's. Past MAX_OPEN_REQUESTS_PER_CLIENT from its client
 * address, or MAX_OPEN_REQUESTS_PER_ADDRESS for the address (approved ones and those it replaces
 * not counted), it is held: stored ended, never shown to a trustee, and answered as any other.
 */
export function decideRequestSlot(
  live: readonly LiveAsk[],
  form: Pick<NewRecoveryRequest, "clientKey" | "bindingHash">,
): { held: boolean; replaces: string[] } {
  const own = (r: LiveAsk) => form.bindingHash !== null && r.bindingHash === form.bindingHash;
  const replaces = live.filter(own).map((r) => r.requestId);
  const counted = live.filter((r) => !r.approved && !own(r));
  const fromClient = counted.filter((r) => r.clientKey === form.clientKey).length;
  const held = fromClient >= MAX_OPEN_REQUESTS_PER_CLIENT || counted.length >= MAX_OPEN_REQUESTS_PER_ADDRESS;
  return { held, replaces: held ? [] : replaces };
}

/** What a request's secret opens to: the request it names (sealed by this server for it). */
export interface RequestSecret {
  r: string;
}

/** A secret this server sealed for this very request, else 404 (any other secret, forged, or expired). */
export function decideRequestSecret(opened: RequestSecret | null, requestId: string): void {
  if (!opened || opened.r !== requestId) throw recoveryTokenWrong();
}

/** The stored request a secret names: gone, or stored with another secret's hash, is 404 as any other secret. */
export function decideAskOfSecret(ask: RecoveryAsk | null, tokenHash: string): RecoveryAsk {
  if (!ask || ask.tokenHash !== tokenHash) throw recoveryTokenWrong();
  return ask;
}

/** A request's polls and sign-ins in its window: past RECOVERY_POLLS_PER_HOUR, 429 until the window ends. */
export function decideRequestPolls(count: number, resetInMs: number): void {
  if (count > RECOVERY_POLLS_PER_HOUR) throw recoveryPollsTooMany(retryAfterSec(resetInMs));
}

/**
 * What polling a request may show of it: nothing of its own until a trustee approved it (null: it
 * reads as an open request with no approvals and SHOWN_THRESHOLD, whether it is a decoy, held,
 * replaced, or ended by the account's owner); once approved (a trustee checked its code with the
 * account's owner, so its device is theirs), the account's request as it is.
 */
export function decideRequesterView(ask: RecoveryAsk, approvals: number): RecoveryRequest | null {
  return approvals > 0 && ask.request !== null ? ask.request : null;
}

/** The open request with no approvals that `decideRequesterView` shows in place of one it does not disclose. */
export const undisclosedState = (requestId: string) => ({
  requestId,
  status: "pending" as const,
  threshold: SHOWN_THRESHOLD,
  approvals: [] as never[],
});

/**
 * Signing in with a request no trustee approved: refused as any request with too few approvals,
 * before anything of its account is read. Answers the account's request otherwise.
 */
export function decideSessionAsk(ask: RecoveryAsk, approvals: number): RecoveryRequest {
  const request = decideRequesterView(ask, approvals);
  if (!request) throw tooFewApprovals(0, SHOWN_THRESHOLD);
  return request;
}
