/**
 * A sign-in that passed every check (a password, a second step, or an account recovery): the
 * session and its first tokens, and the account's encrypted key bundle. Whether the login may only
 * enrol a second factor is decided here, from its organization's policy (`decideEnrolOnly`).
 */
import type { Context } from "moleculer";
import { newId } from "../domain/ids";
import { timestamp } from "../domain/encoding";
import { hashToken, newOpaqueToken } from "../domain/opaque-tokens";
import { MAX_LIVE_SESSIONS } from "../domain/accounts/sessions";
import { decideEnrolOnly } from "../domain/accounts/second-factors";
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

/** Whether the user's logins may only enrol a second factor now. */
export async function enrolOnlyFor(
  rt: Pick<Runtime, "store">,
  user: Pick<UserRecord, "userId" | "orgId">,
  /** How many factors the account has, when the caller read them already (a login does). */
  factorCount?: number,
): Promise<boolean> {
  const policies = (await rt.store.security.getPolicies(user.orgId)) ?? DEFAULT_POLICIES;
  if (!policies.requireSecondFactor) return false;
  return decideEnrolOnly(true, factorCount ?? (await rt.store.security.listFactors(user.userId)).length);
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
  /** The account's factor count, when the caller read the factors already (not read again). */
  factorCount?: number;
}

/** Stores the new session and its refresh token, ends the sessions it displaces, and tells the nodes. */
async function startSession(rt: Runtime, ctx: Context, user: UserRecord, opts: SignInOptions) {
  const { store } = rt;
  const refresh = newRefreshToken(rt);
  const sessionId = newId();
  const { ended } = await store.sessions.startSession({
    accountVersion: opts.accountVersion ?? user.accountVersion,
    maxLive: MAX_LIVE_SESSIONS,
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
  return { sessionId, refreshToken: refresh.token };
}

/** Starts the session (ending the least recently used beyond the cap, or with `endOthers` every other one) and answers the login body. */
export async function signIn(rt: Runtime, ctx: Context, user: UserRecord, opts: SignInOptions) {
  const { sessionId, refreshToken } = await startSession(rt, ctx, user, opts);
  const enrolOnly = !opts.fullAccess && (await enrolOnlyFor(rt, user, opts.factorCount));
  // An account that rotated its keys: its devices follow the log from the keys they knew.
  const keyLog = await rt.store.accounts.keyLog(user.userId);
  const caller: Caller = {
    userId: user.userId,
    orgId: user.orgId,
    role: user.role,
    sessionId,
    ...(enrolOnly && { enrolOnly: true as const }),
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
