/**
 * Second factors: an authenticator app (TOTP), security keys and passkeys (WebAuthn), and
 * one-time recovery codes. Enrolment proves the factor before anything is stored (a code from the
 * app; the key's signature over a challenge this server sealed); removing one, or making new
 * recovery codes, takes the master password. The rules: lib/domain/second-factors.ts.
 */
import { randomBytes } from "node:crypto";
import type { Context, ServiceSchema } from "moleculer";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { newId } from "../lib/domain/ids";
import {
  decideFactorEnrolment,
  decideFactorName,
  formatRecoveryCode,
  hashRecoveryCode,
  RECOVERY_CODE_COUNT,
  SECOND_STEP_TTL_MS,
  type SecondFactor,
} from "../lib/domain/second-factors";
import { DEFAULT_POLICIES } from "../lib/domain/org-policies";
import { factorNotConfirmed, tokenUserGone } from "../lib/domain/refusals";
import { newTotpSecret, registrationOptions, totpStep, TOTP_SECRET_PURPOSE, verifyRegistration } from "../lib/auth/factor-checks";
import { proveCurrentPassword } from "../lib/auth/password-proof";
import { callerOf, created, noContent, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { UserRecord } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type Ctx<P = unknown> = Context<P, RequestMeta>;

const TOTP_SETUP = "totp-setup";
const WEBAUTHN_SETUP = "webauthn-setup";

/** A factor as its owner sees it: never its secret or key. */
const factorView = (f: SecondFactor) => ({
  factorId: f.factorId,
  kind: f.kind,
  name: f.name,
  createdAt: f.createdAt,
  ...(f.lastUsedAt && { lastUsedAt: f.lastUsedAt }),
});

export function factorsService(rt: Runtime): ServiceSchema {
  const { store, clock, events, config } = rt;
  const rp = { rpId: config.webauthnRpId, ...(config.webauthnOrigins && { origins: config.webauthnOrigins }) };

  async function caller(ctx: Ctx): Promise<UserRecord> {
    const user = await store.accounts.findUserById(callerOf(ctx).userId);
    if (!user) throw tokenUserGone();
    return user;
  }

  /**
   * A new factor takes the master password, as removing one does: a stolen access token must not
   * enrol the thief's factor (and lock its owner out of the next login). A login that may only
   * enrol (its organization requires a factor) just proved the password, and has nothing else to do.
   */
  async function proveUnlessEnrolling(ctx: Ctx, user: UserRecord, authHash: string | undefined): Promise<void> {
    const c = callerOf(ctx);
    if (c.enrolOnly) return;
    await proveCurrentPassword(rt, user, c.sessionId, authHash ?? "");
  }

  const policyRequires = async (user: UserRecord) =>
    ((await store.security.getPolicies(user.orgId)) ?? DEFAULT_POLICIES).requireSecondFactor;

  /** New recovery codes, stored hashed; answered once. */
  async function newRecoveryCodes(user: UserRecord): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => formatRecoveryCode(randomBytes(16)));
    await store.security.replaceRecoveryCodes({
      userId: user.userId,
      codeHashes: codes.map(hashRecoveryCode),
      at: clock.timestamp(),
      events: [events.record("user.recovery_codes_made", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
    });
    events.kick();
    return codes;
  }

  /** Stores a proven factor; the first one comes with recovery codes (the way back when it is lost). */
  async function enrol(ctx: Ctx, user: UserRecord, factor: SecondFactor) {
    await store.security.addFactor({
      factor,
      events: [events.record("user.factor_added", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
    });
    events.kick();
    const recoveryCodes = (await store.security.recoveryCodesLeft(user.userId)) === 0 ? await newRecoveryCodes(user) : undefined;
    created(ctx, "/users/me/factors");
    return { factor: factorView(factor), ...(recoveryCodes && { recoveryCodes }) };
  }

  return {
    name: "factors",
    actions: {
      list: {
        async handler(ctx: Ctx) {
          const user = await caller(ctx);
          const [factors, left, required] = await Promise.all([
            store.security.listFactors(user.userId),
            store.security.recoveryCodesLeft(user.userId),
            policyRequires(user),
          ]);
          return { factors: factors.map(factorView), recoveryCodesLeft: left, required };
        },
      },

      totpSetup: {
        async handler(ctx: Ctx) {
          const user = await caller(ctx);
          decideFactorEnrolment(await store.security.listFactors(user.userId), "totp");
          const { secret, uri } = newTotpSecret(user.email);
          return { secret, uri, setupToken: rt.sealer.seal(TOTP_SETUP, { userId: user.userId, secret }, SECOND_STEP_TTL_MS) };
        },
      },

      totpEnrol: {
        params: paramsOf("factors.totpEnrol"),
        async handler(ctx: Ctx<{ name: string; setupToken: string; code: string; authHash?: string }>) {
          const user = await caller(ctx);
          await proveUnlessEnrolling(ctx, user, ctx.params.authHash);
          const name = decideFactorName(ctx.params.name);
          const setup = rt.sealer.open<{ userId: string; secret: string }>(TOTP_SETUP, ctx.params.setupToken);
          if (!setup || setup.userId !== user.userId) throw factorNotConfirmed("setupToken");
          const step = totpStep(setup.secret, ctx.params.code, clock.nowMs());
          if (step === null) throw factorNotConfirmed("code");
          return enrol(ctx, user, {
            factorId: newId(),
            userId: user.userId,
            kind: "totp",
            name,
            createdAt: clock.timestamp(),
            sealedSecret: rt.sealer.seal(TOTP_SECRET_PURPOSE, setup.secret),
            // The code that confirmed it cannot sign in afterwards.
            lastStep: step,
          });
        },
      },

      webauthnOptions: {
        async handler(ctx: Ctx) {
          const user = await caller(ctx);
          const existing = await store.security.listFactors(user.userId);
          decideFactorEnrolment(existing, "webauthn");
          const options = await registrationOptions(rp, user, existing);
          return {
            options,
            setupToken: rt.sealer.seal(WEBAUTHN_SETUP, { userId: user.userId, challenge: options.challenge }, SECOND_STEP_TTL_MS),
          };
        },
      },

      webauthnEnrol: {
        params: paramsOf("factors.webauthnEnrol"),
        async handler(ctx: Ctx<{ name: string; setupToken: string; response: Record<string, unknown>; authHash?: string }>) {
          const user = await caller(ctx);
          await proveUnlessEnrolling(ctx, user, ctx.params.authHash);
          const name = decideFactorName(ctx.params.name);
          const setup = rt.sealer.open<{ userId: string; challenge: string }>(WEBAUTHN_SETUP, ctx.params.setupToken);
          if (!setup || setup.userId !== user.userId) throw factorNotConfirmed("setupToken");
          // The key's signature over the sealed challenge, for this relying party and origin, is checked before anything is stored.
          const key = await verifyRegistration(rp, setup.challenge, ctx.params.response as unknown as RegistrationResponseJSON);
          if (!key) throw factorNotConfirmed("response");
          return enrol(ctx, user, {
            factorId: newId(),
            userId: user.userId,
            kind: "webauthn",
            name,
            createdAt: clock.timestamp(),
            credentialId: key.credentialId,
            publicKey: key.publicKey,
            counter: key.counter,
            ...(key.transports && { transports: key.transports }),
          });
        },
      },

      remove: {
        params: paramsOf("factors.remove"),
        async handler(ctx: Ctx<{ factorId: string; authHash: string }>) {
          const user = await caller(ctx);
          await proveCurrentPassword(rt, user, callerOf(ctx).sessionId, ctx.params.authHash);
          await store.security.removeFactor({
            userId: user.userId,
            factorId: ctx.params.factorId,
            policyRequires: await policyRequires(user),
            events: [events.record("user.factor_removed", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
          });
          events.kick();
          return noContent(ctx);
        },
      },

      recoveryCodes: {
        params: paramsOf("factors.recoveryCodes"),
        async handler(ctx: Ctx<{ authHash: string }>) {
          const user = await caller(ctx);
          await proveCurrentPassword(rt, user, callerOf(ctx).sessionId, ctx.params.authHash);
          if ((await store.security.listFactors(user.userId)).length === 0) throw factorNotConfirmed("factors");
          const recoveryCodes = await newRecoveryCodes(user);
          created(ctx, "/users/me/factors");
          return { recoveryCodes };
        },
      },
    },
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(factorsService);
