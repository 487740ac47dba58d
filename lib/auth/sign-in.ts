/**
 * A sign-in that passed every check (a password, a second step, or an account recovery): the
 * session and its first tokens, and the account's encrypted key bundle. Whether the login may only
 * enrol a second factor is decided by the store under the account's lock, from its organization's
 * policy (`decideEnrolOnly`), and kept by the session: a refresh keeps it (`refreshScope`).
 */
import type { Context } from "moleculer";
import { newId } from "../domain/ids";
import { timestamp } from "../domain/encoding";
import { hashToken, newOpaqueToken } from "../domain/opaque-tokens";
import { MAX_LIVE_SESSIONS } from "../domain/accounts/sessions";
import { RECOVERY_PASSWORD_WINDOW_MS } from "../domain/accounts/recovery";
import { decideRefreshScope } from "../domain/accounts/session-scope";
import { DEFAULT_POLICIES } from "../domain/orgs/policies";
import type { Caller } from "../domain/types";
import type { UserRecord } from "../store/port";
import type { Runtime } from "../runtime";
import { announceEnded } from "./session-check";

export function newRefreshToken(rt: Pick<Runtime, "clock" | "config">) {
  const token = newOpaqueToken();
  const now = rt.clock.nowMs();
  return {
    token,
    tokenHash: hashToken(token),
    createdAt: timestamp(new Date(now)),
    expiresAt: timestamp(new Date(now + rt.config.refreshTokenTtlMs)),
  };
}

/**
 * Whether a refreshed session's new access token may only enrol a second factor
 * (`decideRefreshScope`): the session's scope, kept; a whole session narrowed by the organization's
 * policy as it is now, when the account has no factor (not the session an account recovery opened).
 */
export async function refreshScope(
  rt: Pick<Runtime, "store" | "clock">,
  user: Pick<UserRecord, "userId" | "orgId">,
  session: { sessionId: string; enrolOnly: boolean },
): Promise<boolean> {
  const { store, clock } = rt;
  const policyRequires = ((await store.security.getPolicies(user.orgId)) ?? DEFAULT_POLICIES).requireSecondFactor;
  const factorCount = policyRequires ? (await store.security.listFactors(user.userId)).length : 0;
  const recoverySession =
    policyRequires &&
    factorCount === 0 &&
    (await store.security.findOpenedRecovery({
      userId: user.userId,
      sessionId: session.sessionId,
      since: new Date(clock.nowMs() - RECOVERY_PASSWORD_WINDOW_MS).toISOString(),
    })) !== null;
  return decideRefreshScope({ sessionEnrolOnly: session.enrolOnly, policyRequires, factorCount, recoverySession }).enrolOnly;
}

export async function tokenPair(rt: Pick<Runtime, "accessTokens">, caller: Caller, refreshToken: string) {
  return {
    accessToken: await rt.accessTokens.issue(caller),
    refreshToken,
    tokenType: "Bearer" as const,
    expiresIn: rt.accessTokens.lifetimeSec,
  };
}

export interface SignInOptions {
  deviceName: string;
  address: string;
  endOthers?: boolean;
  /** The key version a password was compared against (the current one by default): a change since refuses the session. */
  accountVersion?: number;
  /** A session an account recovery began: never enrol-only (k trustees vouched; it must set a password and rotate keys). */
  fullAccess?: boolean;
  /** A session emergency access opened to read the account: its tokens may only read (the caller withholds its refresh token). */
  readOnly?: boolean;
}

/** Stores the new session and its refresh token, ends the sessions it displaces, and tells the nodes. */
async function startSession(rt: Runtime, ctx: Context, user: UserRecord, opts: SignInOptions) {
  const { store } = rt;
  const refresh = newRefreshToken(rt);
  const sessionId = newId();
  const { ended, enrolOnly } = await store.sessions.startSession({
    accountVersion: opts.accountVersion ?? user.accountVersion,
    maxLive: MAX_LIVE_SESSIONS,
    ...(opts.fullAccess && { fullAccess: true }),
    session: {
      sessionId,
      userId: user.userId,
      deviceName: opts.deviceName,
      createdAt: refresh.createdAt,
      lastUsedAt: refresh.createdAt,
      address: opts.address,
      expiresAt: refresh.expiresAt,
    },
    token: { tokenHash: refresh.tokenHash, userId: user.userId, createdAt: refresh.createdAt, expiresAt: refresh.expiresAt },
  });
  const others = opts.endOthers
    ? await store.sessions.endSessions({ userId: user.userId, now: rt.clock.timestamp(), except: sessionId })
    : [];
  await announceEnded(ctx, rt.sessions, [...ended, ...others]);
  return { sessionId, refreshToken: refresh.token, enrolOnly };
}

/** Starts the session (ending the least recently used beyond the cap, or with `endOthers` every other one) and answers the login body. */
export async function signIn(rt: Runtime, ctx: Context, user: UserRecord, opts: SignInOptions) {
  const { sessionId, refreshToken, enrolOnly } = await startSession(rt, ctx, user, opts);
  // An account that rotated its keys: its devices follow the log from the keys they knew.
  const keyLog = await rt.store.accounts.keyLog(user.userId);
  const caller: Caller = {
    userId: user.userId,
    orgId: user.orgId,
    role: user.role,
    sessionId,
    ...(enrolOnly && { enrolOnly: true as const }),
    ...(opts.readOnly && { readOnly: true as const }),
  };
  return {
    ...(await tokenPair(rt, caller, refreshToken)),
    sessionId,
    userId: user.userId,
    orgId: user.orgId,
    role: user.role,
    kdf: user.kdf,
    publicKey: user.publicKey,
    signingPublicKey: user.signingPublicKey,
    publicKeySignature: user.publicKeySignature,
    encryptedPrivateKey: user.encryptedPrivateKey,
    encryptedSigningPrivateKey: user.encryptedSigningPrivateKey,
    accountVersion: user.accountVersion,
    ...(user.keyStatement && { keyStatement: user.keyStatement }),
    ...(user.kdfStatement && { kdfStatement: user.kdfStatement }),
    ...(keyLog.length > 0 && { keyLog }),
    ...(enrolOnly && { enrolOnly: true as const }),
  };
}
