/**
 * Sign-in passkeys, the actions (services/factors.service.ts registers them for the account,
 * services/auth.service.ts signs in with them): thin steps around the rules in
 * lib/domain/accounts/passkey-logins.ts and the checks in ./passkey-checks.ts.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import {
  decidePasskeyPolicy,
  planPasskeyEnrolment,
  planPasskeySignIn,
  type PasskeyLogin,
  type PasskeyUnlock,
} from "../domain/accounts/passkey-logins";
import { passkeyNotFound, passkeySignInFailed } from "../domain/accounts/refusals";
import { decidePasswordProof, decideSetupUse, SECOND_STEP_TTL_MS, setupUseKey } from "../domain/accounts/second-factors";
import { decideDeviceName } from "../domain/accounts/sessions";
import { requireInOrg } from "../domain/accounts/sign-in";
import { requireUser } from "../domain/accounts/users";
import { passkeySignInOf } from "../domain/orgs/policies";
import { callerOf, created, noContent, type Ctx } from "../http/context";
import type { Runtime } from "../runtime";
import type { UserRecord } from "../store/port";
import type { Logins } from "./logins";
import { passkeyRegistrationOptions, passkeySignInOptions, verifyPasskeyRegistration, verifyPasskeySignIn } from "./passkey-checks";
import { proveCurrentPassword } from "./password-proof";
import { signIn } from "./sign-in";

const PASSKEY_SETUP = "passkey-setup";
const PASSKEY_CHALLENGE = "passkey-challenge";

export type PasskeyAddParams = {
  currentAuthHash?: string;
  authHash?: string;
  name: string;
  setupToken: string;
  response: Record<string, unknown>;
  unlock?: PasskeyUnlock & { accountVersion: number };
};
export type PasskeySignInParams = { challengeToken: string; response: Record<string, unknown>; deviceName?: string };

/** A passkey as its owner sees it: never its public key; the kept wrap, which a password change re-wraps, when it unlocks. */
export const passkeyView = (l: PasskeyLogin) => ({
  credentialId: l.credentialId,
  name: l.name,
  createdAt: l.createdAt,
  ...(l.lastUsedAt && { lastUsedAt: l.lastUsedAt }),
  unlock: l.unlock !== undefined,
  ...(l.unlock && { keptWrappedKey: l.unlock.keptWrappedKey }),
});

const rpOf = ({ config }: Runtime) => ({ rpId: config.webauthnRpId, ...(config.webauthnOrigins && { origins: config.webauthnOrigins }) });
const callerAccount = async ({ store }: Runtime, ctx: Ctx) => requireUser(await store.accounts.findUserById(callerOf(ctx).userId));
const policyOf = async ({ store }: Runtime, user: Pick<UserRecord, "orgId">) =>
  passkeySignInOf(await store.security.getPolicies(user.orgId));
const own = (u: UserRecord) => ({ actorId: u.userId, orgId: u.orgId, targetUserId: u.userId });

export async function listPasskeys(rt: Runtime, ctx: Ctx) {
  const user = await callerAccount(rt, ctx);
  const [held, policy] = await Promise.all([rt.store.security.listPasskeyLogins(user.userId), policyOf(rt, user)]);
  return { passkeys: held.map(passkeyView), policy };
}

export async function passkeyOptions(rt: Runtime, ctx: Ctx) {
  const user = await callerAccount(rt, ctx);
  decidePasskeyPolicy(await policyOf(rt, user));
  const options = await passkeyRegistrationOptions(rpOf(rt), user, await rt.store.security.listPasskeyLogins(user.userId));
  return { options, setupToken: rt.sealer.seal(PASSKEY_SETUP, { userId: user.userId, challenge: options.challenge }, SECOND_STEP_TTL_MS) };
}

/**
 * Registers a passkey that signs in, with the master password (an access token alone must not bind
 * a thief's passkey) and, when the authenticator has the PRF extension, the unlock wraps the client made.
 */
export async function addPasskey(rt: Runtime, ctx: Ctx<PasskeyAddParams>) {
  const { store, clock, events, sealer, counters } = rt;
  const p = ctx.params;
  const user = await callerAccount(rt, ctx);
  const policy = await policyOf(rt, user);
  decidePasskeyPolicy(policy);
  await proveCurrentPassword(rt, user, callerOf(ctx).sessionId, decidePasswordProof(p));
  const setup = sealer.open<{ userId: string; challenge: string }>(PASSKEY_SETUP, p.setupToken);
  const key = setup ? await verifyPasskeyRegistration(rpOf(rt), setup.challenge, p.response as unknown as RegistrationResponseJSON) : null;
  const plan = planPasskeyEnrolment({ userId: user.userId, policy, setup, key }, p.name);
  decideSetupUse((await counters.add(setupUseKey("webauthn", `passkey:${setup!.challenge}`), 1, SECOND_STEP_TTL_MS)).count);
  const { accountVersion, ...unlock } = p.unlock ?? { accountVersion: undefined };
  const login: PasskeyLogin = {
    credentialId: plan.key.credentialId,
    userId: user.userId,
    name: plan.name,
    publicKey: plan.key.publicKey,
    counter: plan.key.counter,
    ...(plan.key.transports && { transports: plan.key.transports }),
    createdAt: clock.timestamp(),
    ...(p.unlock && { unlock: unlock as PasskeyUnlock }),
  };
  await store.security.addPasskeyLogin({ login, unlockVersion: accountVersion, events: [events.record("user.passkey_added", own(user))] });
  events.kick();
  created(ctx, "/users/me/passkeys");
  return { passkey: passkeyView(login) };
}

export async function removePasskey(rt: Runtime, ctx: Ctx<{ credentialId: string }>) {
  const { store, events } = rt;
  const user = await callerAccount(rt, ctx);
  const removed = await store.security.removePasskeyLogin({
    userId: user.userId,
    credentialId: ctx.params.credentialId,
    events: [events.record("user.passkey_removed", own(user))],
  });
  if (!removed) throw passkeyNotFound();
  events.kick();
  return noContent(ctx);
}

/** A sign-in's challenge, sealed for the answer to come; limited per address as prelogin is. */
export async function passkeySignInChallenge(rt: Runtime, logins: Logins, ctx: Ctx) {
  await logins.perAddress(ctx.meta.clientIp, "prelogin");
  const options = await passkeySignInOptions(rpOf(rt));
  return { options, challengeToken: rt.sealer.seal(PASSKEY_CHALLENGE, { challenge: options.challenge }, SECOND_STEP_TTL_MS) };
}

/**
 * Signs in with a passkey: its assertion over the sealed challenge (once), the account, the policy,
 * the counter moved on; then a session as a password sign-in starts one, with the account's email and
 * this passkey's unlock wraps (the client opens them with the PRF answer, which never reaches here).
 */
export async function passkeySignIn(rt: Runtime, logins: Logins, ctx: Ctx<PasskeySignInParams>) {
  const { store, clock, counters, metrics } = rt;
  const p = ctx.params;
  await logins.perAddress(ctx.meta.clientIp, "prelogin");
  const sealed = rt.sealer.open<{ challenge: string }>(PASSKEY_CHALLENGE, p.challengeToken);
  if (!sealed) throw passkeySignInFailed();
  if ((await counters.add(`passkey-challenge:${setupUseKey("webauthn", sealed.challenge)}`, 1, SECOND_STEP_TTL_MS)).count !== 1)
    throw passkeySignInFailed();
  const response = p.response as unknown as AuthenticationResponseJSON;
  const login = typeof response.id === "string" ? await store.security.findPasskeyLogin(response.id) : null;
  const user = login ? await store.accounts.findUserById(login.userId) : null;
  const newCounter = login && user ? await verifyPasskeySignIn(rpOf(rt), sealed.challenge, response, login) : null;
  let plan;
  try {
    plan = planPasskeySignIn({ login, user, newCounter, policy: user ? await policyOf(rt, user) : "allowed" });
  } catch (err) {
    metrics.loginFailed();
    throw err;
  }
  requireInOrg(plan.user);
  // Two sign-ins with one assertion, or a cloned authenticator's: the counter moves once.
  if (
    !(await store.security.usePasskeyLogin({
      credentialId: plan.login.credentialId,
      from: plan.login.counter,
      to: plan.newCounter,
      at: clock.timestamp(),
    }))
  )
    throw passkeySignInFailed();
  const deviceName = decideDeviceName(p.deviceName);
  const answer = await signIn(rt, ctx, plan.user, { deviceName, address: ctx.meta.clientIp ?? "unknown" });
  const unlock = plan.login.unlock;
  return {
    ...answer,
    email: plan.user.email,
    passkey: {
      credentialId: plan.login.credentialId,
      ...(unlock && { unlock: { prfWrappedKey: unlock.prfWrappedKey, wrappedStretchedKey: unlock.wrappedStretchedKey } }),
    },
  };
}
