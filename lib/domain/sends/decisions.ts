/**
 * Sends: a text or a file shared with anyone who holds a link, sealed on the client under a key the
 * link's fragment carries (protocol/formats/sends.ts). The server keeps the sealed parts and what it
 * must know to keep them (whose, how large, until when, how many opens are left, a slow hash of the
 * password's proof) and never a title, a name or a key. Each request's rule is one `plan*` here,
 * called by both store adapters on the state they read under the send's lock.
 *
 * A send is made with its sealed size and part count (checked against SEND_MAX_BYTES, the member's
 * SEND_MAX_PER_USER live sends, the organization's SEND_ORG_QUOTA, and the longest lifetime the
 * server and the organization's policy allow), takes its parts, and is finished; only then does its
 * link open it. Each open counts a view, under the send's lock: of fifty opens at once of a send
 * with one view left, exactly one succeeds. The open that takes the last view takes the data with
 * it: a send of one part loses it in that transaction, a file after SEND_ACCESS_MS (the time its
 * opener has to read the parts). An expired send is gone to its link at once and from the store
 * at the sweeper's next pass.
 */
import { MAX_SEND_PARTS, MAX_SEND_PART_SEALED, SEND_PART_OVERHEAD } from "../../../protocol/formats/sends";
import { invalid } from "../../errors";
import { parseDuration } from "../duration";
import type { UserId } from "../ids";
import {
  sendAccessInvalid,
  sendFinished,
  sendIdTaken,
  sendIncomplete,
  sendLifetimeRefused,
  sendNotFound,
  sendPartOutOfRange,
  sendPartsTooLarge,
  sendPasswordRequired,
  sendQuotaFull,
  sendsForbidden,
  sendTooLarge,
  tooManySends,
} from "./refusals";

/** How long an open's access to a send's parts lasts (and a last view's file stays to be read). */
export const SEND_ACCESS_MS = 10 * 60_000;
/** The shortest lifetime a send may be given. */
export const MIN_SEND_LIFETIME_MS = 60_000;
/** A send's lifetime when its sender names none: a week, as Proton's links. */
export const DEFAULT_SEND_LIFETIME_MS = 7 * 86_400_000;
/** The most views a send may be given. */
export const MAX_SEND_VIEWS = 1000;

/** The settings a new send is checked against. */
export interface SendLimits {
  /** SEND_MAX_BYTES: one send's sealed size, at most. */
  maxBytes: number;
  /** SEND_MAX_PER_USER: live sends one member may have (unfinished ones count; used-up ones do not). */
  perUser: number;
  /** SEND_ORG_QUOTA: sealed bytes an organization's live sends hold. */
  orgQuotaBytes: number;
  /** SEND_MAX_LIFETIME, in milliseconds. */
  maxLifetimeMs: number;
}

/** What the organization's policies say of sends (lib/domain/orgs/policies.ts). */
export interface SendPolicy {
  forbidden: boolean;
  /** The longest lifetime, when the organization caps it. */
  maxLifetimeMs: number | null;
}

/** A new send, as asked for. */
export interface SendRequest {
  parts: number;
  bytes: number;
  lifetimeMs: number;
}

/** What making a send finds under the organization's lock. */
export interface SendSnapshot {
  idTaken: boolean;
  /** The member's live sends. */
  ownerLive: number;
  /** Sealed bytes the organization's live sends hold. */
  orgBytes: number;
}

/** A send as the server knows it. */
export interface SendState {
  ownerId: UserId;
  parts: number;
  bytes: number;
  complete: boolean;
  /** Milliseconds since the epoch. */
  expiresAtMs: number;
  maxViews: number | null;
  views: number;
  /** When its parts are gone (its last view was taken), else null. */
  partsGoneAtMs: number | null;
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
const durationText = (ms: number): string =>
  ms % 86_400_000 === 0
    ? plural(ms / 86_400_000, "day")
    : ms % 3_600_000 === 0
      ? plural(ms / 3_600_000, "hour")
      : plural(Math.round(ms / 60_000), "minute");

/** A new send's lifetime as asked for (`expiresIn`, a duration), or the default week; refused when it is not a duration. */
export function sendLifetimeOf(expiresIn: string | undefined, limits: Pick<SendLimits, "maxLifetimeMs">): number {
  if (expiresIn === undefined) return DEFAULT_SEND_LIFETIME_MS;
  const ms = parseDuration(expiresIn);
  if (ms === null) throw sendLifetimeRefused(durationText(limits.maxLifetimeMs), "server");
  return ms;
}

/**
 * A new send as asked, before anything is read or hashed: sends allowed, its parts and size within
 * bounds, its lifetime within the server's and the organization's caps.
 */
export function planSendRequest(req: SendRequest, limits: SendLimits, policy: SendPolicy): void {
  if (policy.forbidden) throw sendsForbidden();
  if (!Number.isSafeInteger(req.parts) || req.parts < 1 || req.parts > MAX_SEND_PARTS)
    throw invalid(`A send has 1 to ${MAX_SEND_PARTS} parts`, "parts");
  if (req.bytes < req.parts * SEND_PART_OVERHEAD || req.bytes > req.parts * MAX_SEND_PART_SEALED)
    throw invalid(`${req.parts} sealed parts hold ${req.parts * SEND_PART_OVERHEAD} to ${req.parts * MAX_SEND_PART_SEALED} bytes`, "bytes");
  const cap = policy.maxLifetimeMs !== null && policy.maxLifetimeMs < limits.maxLifetimeMs ? policy.maxLifetimeMs : limits.maxLifetimeMs;
  if (req.lifetimeMs < MIN_SEND_LIFETIME_MS || req.lifetimeMs > cap)
    throw sendLifetimeRefused(durationText(cap), cap === limits.maxLifetimeMs ? "server" : "policy");
  if (req.bytes > limits.maxBytes) throw sendTooLarge(req.bytes, limits.maxBytes);
}

/**
 * A new send, under the organization's lock: the request's rules, then the room the member and the
 * organization have left. `orgBytes` counts every send whose parts are still stored, expired ones
 * the sweeper has not deleted yet included: sends made to expire at once cannot hold more than the quota.
 */
export function planSendCreate(s: SendSnapshot, req: SendRequest, limits: SendLimits, policy: SendPolicy): void {
  planSendRequest(req, limits, policy);
  if (s.idTaken) throw sendIdTaken();
  if (s.ownerLive >= limits.perUser) throw tooManySends(limits.perUser);
  if (s.orgBytes + req.bytes > limits.orgQuotaBytes) throw sendQuotaFull(s.orgBytes, req.bytes, limits.orgQuotaBytes);
}

/** A send its actor may change: their own, not expired, not finished. */
function ownUnfinished(s: SendState | undefined, actorId: UserId, nowMs: number): SendState {
  if (!s || s.ownerId !== actorId || s.expiresAtMs <= nowMs) throw sendNotFound();
  if (s.complete) throw sendFinished();
  return s;
}

/**
 * Whether a part may be sent to a send at `index`, before its body is read (the same refusals as
 * `planSendPartWrite`, which makes this check again with the part in hand, under the lock).
 */
export function planSendPartTarget(s: SendState | undefined, actorId: UserId, nowMs: number, index: number): SendState {
  const send = ownUnfinished(s, actorId, nowMs);
  if (!Number.isInteger(index) || index < 0 || index >= send.parts) throw sendPartOutOfRange(index, send.parts);
  return send;
}

/** One sealed part, in place of one sent before at that index: `others` is what the send's other parts hold. */
export function planSendPartWrite(
  s: SendState | undefined,
  actorId: UserId,
  nowMs: number,
  part: { index: number; size: number; others: number },
): void {
  const send = planSendPartTarget(s, actorId, nowMs, part.index);
  const { size, others } = part;
  if (size < SEND_PART_OVERHEAD || size > MAX_SEND_PART_SEALED || others + size > send.bytes) throw sendPartsTooLarge(send.bytes);
}

/**
 * Finishing a send: every part there, adding up to its size. False when it is finished already
 * (a finish sent again after a lost answer), true when this one finishes it.
 */
export function planSendFinish(s: SendState | undefined, actorId: UserId, nowMs: number, received: ReadonlyMap<number, number>): boolean {
  if (s?.complete && s.ownerId === actorId) return false;
  const send = ownUnfinished(s, actorId, nowMs);
  for (let i = 0; i < send.parts; i++) if (!received.has(i)) throw sendIncomplete(i, send.parts);
  let sum = 0;
  for (const size of received.values()) sum += size;
  if (sum !== send.bytes) throw sendIncomplete(null, send.parts);
  return true;
}

/** Whether the link still opens the send now: finished, not expired, a view left, sends allowed. */
function openable(s: SendState | undefined, nowMs: number, policy: SendPolicy): s is SendState {
  return !!s && s.complete && s.expiresAtMs > nowMs && (s.maxViews === null || s.views < s.maxViews) && !policy.forbidden;
}

/**
 * Before the password is compared: the send is there for its link, the open proves the link's
 * secret (`linkProven`: a send's id alone, seen in a log, neither takes a view nor counts a password
 * guess, and is answered as no send), and the password is asked for when it has one.
 */
export function planSendOpenCheck(
  s: SendState | undefined,
  nowMs: number,
  policy: SendPolicy,
  open: { linkProven: boolean; passwordRequired: boolean; passwordGiven: boolean },
): void {
  if (!openable(s, nowMs, policy) || !open.linkProven) throw sendNotFound();
  if (open.passwordRequired && !open.passwordGiven) throw sendPasswordRequired();
}

/**
 * An open, under the send's lock (its password, if any, compared already): one view taken. When it
 * takes the last, the parts go: at once for a send of one part (the header this open answers is
 * all of it), after SEND_ACCESS_MS for a file.
 */
export function planSendOpen(
  s: SendState | undefined,
  nowMs: number,
  policy: SendPolicy,
): { views: number; viewsLeft: number | null; partsGoneAtMs: number | null } {
  if (!openable(s, nowMs, policy)) throw sendNotFound();
  const views = s.views + 1;
  const viewsLeft = s.maxViews === null ? null : s.maxViews - views;
  const partsGoneAtMs = viewsLeft === 0 ? (s.parts === 1 ? nowMs : nowMs + SEND_ACCESS_MS) : null;
  return { views, viewsLeft, partsGoneAtMs };
}

/**
 * A part read by an open's access (`accessOk`: sealed by this server for this send as it was made,
 * and not ended); refused too once sends are forbidden, as opens are.
 */
export function planSendPartRead(
  s: SendState | undefined,
  nowMs: number,
  index: number,
  accessOk: boolean,
  policy: SendPolicy = { forbidden: false, maxLifetimeMs: null },
): void {
  if (!accessOk) throw sendAccessInvalid();
  if (!s || !s.complete || s.expiresAtMs <= nowMs || (s.partsGoneAtMs !== null && s.partsGoneAtMs <= nowMs) || policy.forbidden)
    throw sendNotFound();
  if (!Number.isInteger(index) || index < 0 || index >= s.parts) throw sendPartOutOfRange(index, s.parts);
}

/** Deleting a send: its owner's, finished or not. */
export function planSendDelete(s: SendState | undefined, actorId: UserId): void {
  if (!s || s.ownerId !== actorId) throw sendNotFound();
}
