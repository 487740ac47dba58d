/** Registration, prelogin, login, refresh and logout (contract section 2), and the caller's sessions. */
import type { ServiceSchema } from "moleculer";
import { authHashMatches } from "../lib/auth/auth-hash";
import { authenticationOptions } from "../lib/auth/factor-checks";
import { register, type RegisterParams } from "../lib/auth/registration";
import { factorMethods, Logins, NO_USER, STEP_PURPOSE, type PendingStep, type SecondStepAnswer } from "../lib/auth/logins";
import { announceEnded } from "../lib/auth/session-check";
import { newRefreshToken, refreshScope, signIn, tokenPair } from "../lib/auth/sign-in";
import { decoyKdf } from "../lib/domain/accounts/decoy-kdf";
import { planRegistrationOffer } from "../lib/domain/accounts/registration";
import { normalizeEmail } from "../lib/domain/email";
import { newId } from "../lib/domain/ids";
import { hashToken, newOpaqueToken } from "../lib/domain/opaque-tokens";
import {
  MAX_REMEMBERED_DEVICES,
  planForgetDevice,
  planRememberedLogin,
  REMEMBERED_DEVICE_TTL_MS,
} from "../lib/domain/accounts/remembered-devices";
import type { UserId } from "../lib/domain/ids";
import {
  decideRefresh,
  decideStepUse,
  requireInOrg,
  requireOpenStep,
  requireRefreshUser,
  requireRightAnswer,
  requireRightPassword,
} from "../lib/domain/accounts/sign-in";
import { decideStepTry, SECOND_STEP_TTL_MS } from "../lib/domain/accounts/second-factors";
import { decideDeviceName, decideSessionEnd } from "../lib/domain/accounts/sessions";
import type { Caller } from "../lib/domain/types";
import { callerOf, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import { sessionView } from "../lib/http/views";
import { netKey } from "../lib/limits/counters";
import type { Runtime } from "../lib/runtime";
import type { UserRecord } from "../lib/store/port";
import { passkeySignIn, passkeySignInChallenge, type PasskeySignInParams } from "../lib/auth/passkey-logins";
import { decidePasswordSignIn } from "../lib/domain/accounts/passkey-logins";
import { passkeySignInOf } from "../lib/domain/orgs/policies";
import { runnerService } from "../app/node-runtime";

type LoginParams = { email: string; authHash: string; deviceName?: string; deviceToken?: string };
type SecondStepParams = SecondStepAnswer & { stepToken: string; deviceName?: string; rememberDevice?: boolean };

export function authService(rt: Runtime): ServiceSchema {
  const logins = new Logins(rt);
  return {
    name: "auth",
    actions: {
      prelogin: { params: paramsOf("auth.prelogin"), handler: (ctx: Ctx<PreloginParams>) => prelogin(rt, logins, ctx) },
      registration: { params: paramsOf("auth.registration"), handler: (ctx: Ctx) => registrationOffer(rt, logins, ctx) },
      register: { params: paramsOf("auth.register"), handler: (ctx: Ctx<RegisterParams>) => register(rt, logins, ctx) },
      login: { params: paramsOf("auth.login"), handler: (ctx: Ctx<LoginParams>) => login(rt, logins, ctx) },
      // Signing in with a passkey (lib/auth/passkey-logins.ts).
      passkeyChallenge: { handler: (ctx: Ctx) => passkeySignInChallenge(rt, logins, ctx) },
      passkeySignIn: { params: paramsOf("auth.passkeySignIn"), handler: (ctx: Ctx<PasskeySignInParams>) => passkeySignIn(rt, logins, ctx) },
      secondStep: { params: paramsOf("auth.secondStep"), handler: (ctx: Ctx<SecondStepParams>) => secondStep(rt, logins, ctx) },
      refresh: { params: paramsOf("auth.refresh"), handler: (ctx: Ctx<{ refreshToken: string }>) => refresh(rt, ctx) },
      logout: { params: paramsOf("auth.logout"), handler: (ctx: Ctx<{ refreshToken: string }>) => logout(rt, ctx) },
      // The caller's sessions (docs/user/second-factors-and-recovery.md, "Sessions").
      sessions: { handler: (ctx: Ctx) => listSessions(rt, ctx) },
      endSession: { params: paramsOf("auth.endSession"), handler: (ctx: Ctx<{ sessionId: string }>) => endSession(rt, ctx) },
      endOtherSessions: { handler: (ctx: Ctx) => endOtherSessions(rt, ctx) },
      // The devices that skip the caller's second step (lib/domain/accounts/remembered-devices.ts).
      rememberedDevices: { handler: (ctx: Ctx) => listRememberedDevices(rt, ctx) },
      forgetDevice: { params: paramsOf("auth.forgetDevice"), handler: (ctx: Ctx<{ deviceId: string }>) => forgetDevice(rt, ctx) },
    },
  };
}

/** Whether registering needs an invite, and whether the first account is still to be made; limited per address as prelogin is. */
async function registrationOffer({ store, config }: Runtime, logins: Logins, ctx: Ctx) {
  await logins.perAddress(ctx.meta.clientIp, "prelogin");
  const hasUsers = config.registrationMode === "disabled" || (await store.accounts.hasUsers());
  return planRegistrationOffer(config.registrationMode, hasUsers);
}

type PreloginParams = { email: string; knownSigningKey?: string };

async function prelogin({ store, serverHmac }: Runtime, logins: Logins, ctx: Ctx<PreloginParams>) {
  await logins.perAddress(ctx.meta.clientIp, "prelogin");
  const address = normalizeEmail(ctx.params.email);
  const known = ctx.params.knownSigningKey;
  const user = await store.accounts.findUserByEmail(address);
  if (!user) {
    // A named key costs the same read for an address with no account: the answer's time tells nothing more.
    if (known !== undefined) await store.accounts.keyLog(NO_USER);
    // An unknown address answers what a new user of the SDK registers, with a salt derived
    // from the address and a server secret: stable, and alike in every field and in form.
    return { kdf: decoyKdf(serverHmac("prelogin-salt", address)), kdfStatement: logins.decoyStatement(address) };
  }
  const answer = { kdf: user.kdf, kdfStatement: user.kdfStatement ?? logins.decoyStatement(address) };
  // A device that knows keys this account had before a rotation gets its key log, to follow them to the key that
  // signed these parameters. Only one that names such a key: it knew of the account already.
  if (known === undefined || known === user.signingPublicKey) return answer;
  const keyLog = await store.accounts.keyLog(user.userId);
  return keyLog.some((e) => e.signingPublicKey === known) ? { ...answer, keyLog } : answer;
}

async function login(rt: Runtime, logins: Logins, ctx: Ctx<LoginParams>) {
  const { store, metrics } = rt;
  const address = normalizeEmail(ctx.params.email);
  const deviceName = decideDeviceName(ctx.params.deviceName);
  const from = ctx.meta.clientIp ?? "unknown";
  const source = netKey(from);
  // Counted before the slow comparison, and given back on success (lib/domain/accounts/login-limits.ts).
  const counted = await logins.countAttempt(
    [`login:${address}|${source}`, `login-from:${source}`, `login-for:${address}`],
    address,
    source,
  );
  const user = await store.accounts.findUserByEmail(address);
  const ok = await authHashMatches(Buffer.from(ctx.params.authHash, "base64"), user ? user.authHash : await logins.decoyHash);
  // Read for an unknown address too: the answer's time tells nothing more.
  const factors = await store.security.listFactors(user ? user.userId : NO_USER);
  const remembered = await rememberedLogin(rt, ctx.params.deviceToken, user ? user.userId : NO_USER, ok);
  // Only to who knows the password: an organization that requires passkeys signs a member who has one in with it alone.
  if (user && ok) await passwordSignInAllowed(rt, user);
  if (user && factors.length > 0 && remembered.skipSecondStep) {
    // A device this account remembered stands in for the second factor; the login counts as any other until it succeeds.
    requireInOrg(user);
    await logins.giveBack(counted, address, source);
    await store.sessions.useRememberedDevice({ deviceId: remembered.deviceId, at: rt.clock.timestamp() });
    return signIn(rt, ctx, user, { deviceName, address: from });
  }
  if (user && factors.length > 0) {
    // A second step, whether or not the password was right: only both together sign in, and
    // neither step tells which was wrong (lib/domain/accounts/second-factors.ts). The counts stay until then.
    const webauthn = factors.some((f) => f.kind === "webauthn") ? await authenticationOptions(logins.rp, factors) : undefined;
    const step: PendingStep = {
      id: newId(),
      userId: user.userId,
      pw: ok ? 1 : 0,
      accountVersion: user.accountVersion,
      email: address,
      source,
      deviceName,
      counted,
      ...(webauthn && { challenge: webauthn.challenge }),
    };
    const stepToken = rt.sealer.seal(STEP_PURPOSE, step, SECOND_STEP_TTL_MS);
    return { secondFactorRequired: true as const, stepToken, methods: factorMethods(factors), ...(webauthn && { webauthn }) };
  }
  const account = countingFailure(metrics, () => requireRightPassword(user, ok));
  requireInOrg(account);
  await logins.giveBack(counted, address, source);
  return signIn(rt, ctx, account, { deviceName, address: from });
}

async function secondStep(rt: Runtime, logins: Logins, ctx: Ctx<SecondStepParams>) {
  const { store, config, counters, metrics } = rt;
  const p = ctx.params;
  const from = ctx.meta.clientIp ?? "unknown";
  const step = requireOpenStep(rt.sealer.open<PendingStep>(STEP_PURPOSE, p.stepToken));
  decideStepTry((await counters.add(`login-step:${step.id}`, 1, SECOND_STEP_TTL_MS)).count);
  const source = netKey(from);
  const counted = await logins.countAttempt(
    [`login-2fa:${step.userId}|${source}`, `login-from:${source}`, `login-2fa-for:${step.userId}`],
    step.email,
    source,
    // Codes are short: from all addresses together, an account's second step takes LOGIN_MAX_FAILURES guesses per
    // window (its owner's known addresses go on past it), not the password's higher per-account limit.
    config.loginMaxFailures,
  );
  const daily = await logins.countDailyStep(step, source, counted);
  const factors = await store.security.listFactors(step.userId);
  const right = await logins.secondFactorHolds(step, factors, p);
  const found = right ? await store.accounts.findUserById(step.userId) : null;
  const user = countingFailure(metrics, () => requireRightAnswer(found, step.email));
  decideStepUse((await counters.add(`login-step-done:${step.id}`, 1, SECOND_STEP_TTL_MS)).count);
  requireInOrg(user);
  await logins.giveBack([...step.counted, ...counted], step.email, source);
  await logins.giveBackDailyStep(daily);
  const deviceName = p.deviceName === undefined ? step.deviceName : decideDeviceName(p.deviceName);
  // At the key version the first step's password was compared against: a password change since ends it (401).
  const answer = await signIn(rt, ctx, user, { deviceName, address: from, accountVersion: step.accountVersion });
  return p.rememberDevice === true ? { ...answer, deviceToken: await rememberDevice(rt, user, deviceName) } : answer;
}

/**
 * Whether a login's device token skips its second step (`planRememberedLogin`). The device is read
 * whenever a token is sent, for any address; a token that does not serve is never refused: the login
 * asks the second factor as without one.
 */
async function rememberedLogin({ store, clock }: Runtime, deviceToken: string | undefined, userId: UserId, passwordRight: boolean) {
  const device = deviceToken === undefined ? null : await store.sessions.findRememberedDevice(hashToken(deviceToken));
  return planRememberedLogin({ sentToken: deviceToken !== undefined, device, userId, passwordRight, now: clock.timestamp() });
}

/** A new remembered device for the account (an audit record): its token answered once, only its hash stored. */
async function rememberDevice(rt: Runtime, { userId, orgId }: Pick<UserRecord, "userId" | "orgId">, deviceName: string): Promise<string> {
  const token = newOpaqueToken();
  const now = rt.clock.nowMs();
  const at = new Date(now).toISOString();
  await rt.store.sessions.rememberDevice({
    device: {
      deviceId: newId(),
      userId,
      deviceName,
      createdAt: at,
      lastUsedAt: at,
      expiresAt: new Date(now + REMEMBERED_DEVICE_TTL_MS).toISOString(),
    },
    tokenHash: hashToken(token),
    max: MAX_REMEMBERED_DEVICES,
    events: [rt.events.record("user.device_remembered", { actorId: userId, orgId, targetUserId: userId })],
  });
  rt.events.kick();
  return token;
}

async function listRememberedDevices({ store, clock }: Runtime, ctx: Ctx) {
  const caller = callerOf(ctx);
  const devices = await store.sessions.listRememberedDevices({ userId: caller.userId, now: clock.timestamp() });
  return { devices: devices.map(({ userId: _owner, ...shown }) => shown) };
}

/** Forgets one of the caller's remembered devices (an audit record). */
async function forgetDevice({ store, events }: Runtime, ctx: Ctx<{ deviceId: string }>) {
  const { userId, orgId } = callerOf(ctx);
  planForgetDevice(await store.sessions.getRememberedDevice(ctx.params.deviceId), userId);
  const forgotten = events.record("user.device_forgotten", { actorId: userId, orgId, targetUserId: userId });
  if (!(await store.sessions.forgetRememberedDevice({ userId, deviceId: ctx.params.deviceId, events: [forgotten] })))
    planForgetDevice(null, userId);
  events.kick();
  return noContent(ctx);
}

async function refresh(rt: Runtime, ctx: Ctx<{ refreshToken: string }>) {
  const { store, clock } = rt;
  const next = newRefreshToken(rt);
  const outcome = await store.sessions.rotateRefreshToken({
    oldHash: hashToken(ctx.params.refreshToken),
    next,
    now: clock.timestamp(),
    address: ctx.meta.clientIp ?? "unknown",
  });
  // A stolen token caught: the session ends, its access tokens with it.
  if (!outcome.ok && outcome.reason === "reused") await announceEnded(ctx, rt.sessions, [outcome.sessionId]);
  decideRefresh(outcome);
  const user = requireRefreshUser(await store.accounts.findUserById(outcome.userId));
  // The session's scope, kept: an enrol-only session stays so; a whole one narrows under the policy as it is now.
  const enrolOnly = await refreshScope(rt, user, outcome);
  const caller: Caller = { userId: user.userId, orgId: user.orgId, role: user.role, sessionId: outcome.sessionId };
  return tokenPair(rt, enrolOnly ? { ...caller, enrolOnly: true } : caller, next.token);
}

async function logout({ store, clock, sessions }: Runtime, ctx: Ctx<{ refreshToken: string }>) {
  const caller = callerOf(ctx);
  const now = clock.timestamp();
  let ended = await store.sessions.endSessionOfToken({ tokenHash: hashToken(ctx.params.refreshToken), userId: caller.userId, now });
  // A refresh token that is not the caller's, or gone: the session the access token names ends all the same.
  if (ended === null && caller.sessionId !== undefined) {
    [ended = null] = await store.sessions.endSessions({ userId: caller.userId, now, only: caller.sessionId });
  }
  await announceEnded(ctx, sessions, ended === null ? [] : [ended]);
  return noContent(ctx);
}

async function listSessions({ store, clock }: Runtime, ctx: Ctx) {
  const caller = callerOf(ctx);
  const list = await store.sessions.listSessions({ userId: caller.userId, now: clock.timestamp() });
  return { sessions: list.map((s) => sessionView(s, caller)) };
}

async function endSession({ store, clock, sessions }: Runtime, ctx: Ctx<{ sessionId: string }>) {
  const caller = callerOf(ctx);
  const now = clock.timestamp();
  decideSessionEnd(await store.sessions.findSession(ctx.params.sessionId), caller.userId, now);
  const ended = await store.sessions.endSessions({ userId: caller.userId, now, only: ctx.params.sessionId });
  await announceEnded(ctx, sessions, ended);
  return noContent(ctx);
}

async function endOtherSessions({ store, clock, sessions }: Runtime, ctx: Ctx) {
  const caller = callerOf(ctx);
  const ended = await store.sessions.endSessions({ userId: caller.userId, now: clock.timestamp(), except: caller.sessionId });
  await announceEnded(ctx, sessions, ended);
  return { ended: ended.length };
}

async function passwordSignInAllowed({ store }: Runtime, user: UserRecord): Promise<void> {
  const policy = passkeySignInOf(await store.security.getPolicies(user.orgId));
  if (policy === "required") decidePasswordSignIn(policy, (await store.security.listPasskeyLogins(user.userId)).length);
}

/** A wrong password or code counts as a failed login in the metrics; other refusals do not. */
function countingFailure<T>(metrics: Runtime["metrics"], decide: () => T): T {
  try {
    return decide();
  } catch (err) {
    metrics.loginFailed();
    throw err;
  }
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(authService);
