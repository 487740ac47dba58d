/**
 * Second factors: an authenticator app (TOTP), security keys and passkeys (WebAuthn), and
 * one-time recovery codes; and the passkeys that sign in on their own (lib/auth/passkey-logins.ts). Every change (enrolling, removing, new recovery codes) takes the master
 * password, in every session; enrolment proves the factor before anything is stored (a code from
 * the app; the key's signature over a challenge this server sealed), and a setup enrols once. A
 * change ends the account's other sessions, which are told why. The rules:
 * lib/domain/accounts/second-factors.ts, lib/domain/accounts/session-scope.ts.
 */
import { randomBytes } from "node:crypto";
import type { ServiceSchema } from "moleculer";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { requireUser } from "../lib/domain/accounts/users";
import { newId } from "../lib/domain/ids";
import {
  decideFactorEnrolment,
  decidePasswordProof,
  decideRecoveryCodes,
  decideSetupUse,
  formatRecoveryCode,
  hashRecoveryCode,
  planKeyEnrolment,
  planTotpEnrolment,
  RECOVERY_CODE_COUNT,
  SECOND_STEP_TTL_MS,
  setupUseKey,
  type FactorKind,
  type SecondFactor,
} from "../lib/domain/accounts/second-factors";
import { planFactorChangeSessions, type FactorChange } from "../lib/domain/accounts/session-scope";
import { DEFAULT_POLICIES } from "../lib/domain/orgs/policies";
import { newTotpSecret, registrationOptions, totpStep, TOTP_SECRET_PURPOSE, verifyRegistration } from "../lib/auth/factor-checks";
import { proveCurrentPassword } from "../lib/auth/password-proof";
import { announceChanged, announceEnded } from "../lib/auth/session-check";
import type { FactorChangeOutcome } from "../lib/store/port";
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { UserRecord } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";
import { addPasskey, listPasskeys, passkeyOptions, removePasskey, type PasskeyAddParams } from "../lib/auth/passkey-logins";
import { runnerService } from "../app/node-runtime";

const TOTP_SETUP = "totp-setup";
const WEBAUTHN_SETUP = "webauthn-setup";

/** The master password's proof: `currentAuthHash`, or `authHash` as earlier clients name it (`decidePasswordProof`). */
type ProvenParams = { currentAuthHash?: string; authHash?: string };
type TotpEnrolParams = ProvenParams & { name: string; setupToken: string; code: string };
type KeyEnrolParams = ProvenParams & { name: string; setupToken: string; response: Record<string, unknown> };

export function factorsService(rt: Runtime): ServiceSchema {
  return {
    name: "factors",
    actions: {
      list: { handler: (ctx: Ctx) => list(rt, ctx) },
      totpSetup: { handler: (ctx: Ctx) => totpSetup(rt, ctx) },
      totpEnrol: { params: paramsOf("factors.totpEnrol"), handler: (ctx: Ctx<TotpEnrolParams>) => totpEnrol(rt, ctx) },
      webauthnOptions: { handler: (ctx: Ctx) => webauthnOptions(rt, ctx) },
      webauthnEnrol: { params: paramsOf("factors.webauthnEnrol"), handler: (ctx: Ctx<KeyEnrolParams>) => webauthnEnrol(rt, ctx) },
      remove: { params: paramsOf("factors.remove"), handler: (ctx: Ctx<ProvenParams & { factorId: string }>) => remove(rt, ctx) },
      recoveryCodes: { params: paramsOf("factors.recoveryCodes"), handler: (ctx: Ctx<ProvenParams>) => recoveryCodes(rt, ctx) },
      // Passkeys that sign in to the account (lib/auth/passkey-logins.ts).
      passkeys: { handler: (ctx: Ctx) => listPasskeys(rt, ctx) },
      passkeyOptions: { handler: (ctx: Ctx) => passkeyOptions(rt, ctx) },
      addPasskey: { params: paramsOf("factors.addPasskey"), handler: (ctx: Ctx<PasskeyAddParams>) => addPasskey(rt, ctx) },
      removePasskey: {
        params: paramsOf("factors.removePasskey"),
        handler: (ctx: Ctx<{ credentialId: string }>) => removePasskey(rt, ctx),
      },
    },
  };
}

/** A factor as its owner sees it: never its secret or key. */
const factorView = (f: SecondFactor) => ({
  factorId: f.factorId,
  kind: f.kind,
  name: f.name,
  createdAt: f.createdAt,
  ...(f.lastUsedAt && { lastUsedAt: f.lastUsedAt }),
});

const caller = async ({ store }: Runtime, ctx: Ctx) => requireUser(await store.accounts.findUserById(callerOf(ctx).userId));
/** An event the account's owner made about their own account. */
const own = (u: UserRecord) => ({ actorId: u.userId, orgId: u.orgId, targetUserId: u.userId });
/** The relying party security keys sign for. */
const rpOf = ({ config }: Runtime) => ({ rpId: config.webauthnRpId, ...(config.webauthnOrigins && { origins: config.webauthnOrigins }) });

/**
 * Every factor change takes the master password, in every session (one that may only enrol
 * included: its access token may be a thief's, who must not bind their factor, nor read the
 * recovery codes, and so lock the owner out). A wrong one counts as a password change's does.
 */
async function proveForFactorChange(rt: Runtime, ctx: Ctx<ProvenParams>, user: UserRecord): Promise<void> {
  await proveCurrentPassword(rt, user, callerOf(ctx).sessionId, decidePasswordProof(ctx.params));
}

/** A setup enrols once: spent when its answer checked out, just before the factor is stored (two at once: one lands). */
async function spendSetup({ counters }: Runtime, kind: FactorKind, sealed: string): Promise<void> {
  decideSetupUse((await counters.add(setupUseKey(kind, sealed), 1, SECOND_STEP_TTL_MS)).count);
}

/** What a factor change does to the account's sessions, for the store to apply in its transaction. */
const sessionsAfter = (ctx: Ctx, change: FactorChange) => planFactorChangeSessions(change, callerOf(ctx).sessionId);

/** After the change is committed: the ended sessions' tokens stop everywhere, saying why; the caller's own, widened, is read again. */
async function announceFactorChange(rt: Runtime, ctx: Ctx, change: FactorChange, outcome: FactorChangeOutcome): Promise<void> {
  const plan = sessionsAfter(ctx, change);
  await announceEnded(ctx, rt.sessions, outcome.endedSessions, plan.endedWhy);
  if (plan.widenKept && plan.keep !== undefined) await announceChanged(ctx, rt.sessions, [plan.keep]);
}

const policyRequires = async ({ store }: Runtime, user: UserRecord) =>
  ((await store.security.getPolicies(user.orgId)) ?? DEFAULT_POLICIES).requireSecondFactor;

/**
 * New recovery codes, stored hashed; answered once. Made on their own (`replacing`: the caller's
 * request), they end the account's other sessions, as a factor change does; with a first factor,
 * its enrolment ended them already.
 */
async function newRecoveryCodes(rt: Runtime, user: UserRecord, replacing?: Ctx): Promise<string[]> {
  const { store, clock, events } = rt;
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => formatRecoveryCode(randomBytes(16)));
  const outcome = await store.security.replaceRecoveryCodes({
    userId: user.userId,
    codeHashes: codes.map(hashRecoveryCode),
    at: clock.timestamp(),
    ...(replacing && { sessions: sessionsAfter(replacing, "recovery-codes") }),
    events: [events.record("user.recovery_codes_made", own(user))],
  });
  events.kick();
  if (replacing) await announceFactorChange(rt, replacing, "recovery-codes", outcome);
  return codes;
}

/**
 * Stores a proven factor, ending the account's other sessions (the caller's own, if it could only
 * enrol, becomes whole: its next refresh has full access); the first one comes with recovery codes
 * (the way back when it is lost).
 */
async function enrol(rt: Runtime, ctx: Ctx, user: UserRecord, factor: SecondFactor) {
  const { store, events } = rt;
  const outcome = await store.security.addFactor({
    factor,
    sessions: sessionsAfter(ctx, "enrol"),
    events: [events.record("user.factor_added", own(user))],
  });
  events.kick();
  await announceFactorChange(rt, ctx, "enrol", outcome);
  const recoveryCodes = (await store.security.recoveryCodesLeft(user.userId)) === 0 ? await newRecoveryCodes(rt, user) : undefined;
  created(ctx, "/users/me/factors");
  return { factor: factorView(factor), ...(recoveryCodes && { recoveryCodes }) };
}

async function list(rt: Runtime, ctx: Ctx) {
  const { store } = rt;
  const user = await caller(rt, ctx);
  const [factors, left, required] = await Promise.all([
    store.security.listFactors(user.userId),
    store.security.recoveryCodesLeft(user.userId),
    policyRequires(rt, user),
  ]);
  return { factors: factors.map(factorView), recoveryCodesLeft: left, required };
}

async function totpSetup(rt: Runtime, ctx: Ctx) {
  const user = await caller(rt, ctx);
  decideFactorEnrolment(await rt.store.security.listFactors(user.userId), "totp");
  const { secret, uri } = newTotpSecret(user.email);
  return { secret, uri, setupToken: rt.sealer.seal(TOTP_SETUP, { userId: user.userId, secret }, SECOND_STEP_TTL_MS) };
}

async function totpEnrol(rt: Runtime, ctx: Ctx<TotpEnrolParams>) {
  const { clock, sealer } = rt;
  const user = await caller(rt, ctx);
  await proveForFactorChange(rt, ctx, user);
  const setup = sealer.open<{ userId: string; secret: string }>(TOTP_SETUP, ctx.params.setupToken);
  const matchedStep = setup ? totpStep(setup.secret, ctx.params.code, clock.nowMs()) : null;
  const plan = planTotpEnrolment({ userId: user.userId, setup, matchedStep }, ctx.params.name);
  await spendSetup(rt, "totp", plan.secret);
  return enrol(rt, ctx, user, {
    factorId: newId(),
    userId: user.userId,
    kind: "totp",
    name: plan.name,
    createdAt: clock.timestamp(),
    sealedSecret: sealer.seal(TOTP_SECRET_PURPOSE, plan.secret),
    // The code that confirmed it cannot sign in afterwards.
    lastStep: plan.lastStep,
  });
}

async function webauthnOptions(rt: Runtime, ctx: Ctx) {
  const user = await caller(rt, ctx);
  const existing = await rt.store.security.listFactors(user.userId);
  decideFactorEnrolment(existing, "webauthn");
  const keys = existing.filter((f) => f.kind === "webauthn").map((f) => ({ credentialId: f.credentialId!, transports: f.transports }));
  const options = await registrationOptions(rpOf(rt), user, keys);
  return {
    options,
    setupToken: rt.sealer.seal(WEBAUTHN_SETUP, { userId: user.userId, challenge: options.challenge }, SECOND_STEP_TTL_MS),
  };
}

async function webauthnEnrol(rt: Runtime, ctx: Ctx<KeyEnrolParams>) {
  const user = await caller(rt, ctx);
  await proveForFactorChange(rt, ctx, user);
  const setup = rt.sealer.open<{ userId: string; challenge: string }>(WEBAUTHN_SETUP, ctx.params.setupToken);
  // The key's signature over the sealed challenge, for this relying party and origin, is checked before anything is stored.
  const response = ctx.params.response as unknown as RegistrationResponseJSON;
  const key = setup ? await verifyRegistration(rpOf(rt), setup.challenge, response) : null;
  const { name, key: k } = planKeyEnrolment({ userId: user.userId, setup, key }, ctx.params.name);
  await spendSetup(rt, "webauthn", setup!.challenge);
  return enrol(rt, ctx, user, {
    factorId: newId(),
    userId: user.userId,
    kind: "webauthn",
    name,
    createdAt: rt.clock.timestamp(),
    credentialId: k.credentialId,
    publicKey: k.publicKey,
    counter: k.counter,
    ...(k.transports && { transports: k.transports }),
  });
}

async function remove(rt: Runtime, ctx: Ctx<ProvenParams & { factorId: string }>) {
  const { store, clock, events } = rt;
  const user = await caller(rt, ctx);
  await proveForFactorChange(rt, ctx, user);
  const outcome = await store.security.removeFactor({
    userId: user.userId,
    factorId: ctx.params.factorId,
    sessions: sessionsAfter(ctx, "remove"),
    at: clock.timestamp(),
    events: [events.record("user.factor_removed", own(user))],
  });
  events.kick();
  await announceFactorChange(rt, ctx, "remove", outcome);
  return noContent(ctx);
}

async function recoveryCodes(rt: Runtime, ctx: Ctx<ProvenParams>) {
  const user = await caller(rt, ctx);
  await proveForFactorChange(rt, ctx, user);
  decideRecoveryCodes((await rt.store.security.listFactors(user.userId)).length);
  const codes = await newRecoveryCodes(rt, user, ctx);
  created(ctx, "/users/me/factors");
  return { recoveryCodes: codes };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(factorsService);
