/** Registration, prelogin, login, refresh and logout (contract section 2), and the caller's sessions. */
import type { UserId } from "../lib/domain/ids";
import { newId, userIdForKey, type OrgId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { authHashMatches, hashAuthHash } from "../lib/auth/auth-hash";
import { normalizeEmail } from "../lib/domain/email";
import { decideOrgName } from "../lib/domain/names";
import { decoyKdf } from "../lib/domain/decoy-kdf";
import { checkKdf, checkKeyBundle, normalizeKdf, type KdfParams, type KeyBundle } from "../lib/domain/keys";
import { decideRegistration, decideRegistrationOpen } from "../lib/domain/registration";
import { addressLimit, retryAfterSec } from "../lib/domain/address-limits";
import { hashToken } from "../lib/domain/opaque-tokens";
import type { Caller, SignedStatement } from "../lib/domain/types";
import { checkInviteBinding, checkKdfStatement, checkKeyStatement, STATEMENT_VERSION } from "../lib/domain/statements";
import { callerOf, created, noContent, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import { limitPerAddress, netKey } from "../lib/limits/counters";
import {
  badRefreshToken,
  inviteBeingRedeemed,
  rateLimited,
  refreshUserGone,
  removedFromOrg,
  tooManyStepTries,
  wrongEmailOrPassword,
  wrongPasswordOrCode,
} from "../lib/domain/refusals";
import { decideDeviceName, decideSessionEnd } from "../lib/domain/sessions";
import { announceEnded } from "../lib/auth/session-check";
import { sessionView } from "../lib/http/views";
import { decideLoginAttempt, KNOWN_ADDRESS_MS, LOGIN_REFUSAL_MESSAGE } from "../lib/domain/login-limits";
import type { NewUser, UserRecord } from "../lib/store/port";
import { decideKdfAgainstPolicy, DEFAULT_POLICIES } from "../lib/domain/org-policies";
import { RECOVERY_PASSWORD_WINDOW_MS } from "../lib/domain/account-recovery";
import { enrolOnlyFor, newRefreshToken, signIn, tokenPair } from "../lib/auth/sign-in";
import { authenticationOptions, totpStep, verifyAuthentication } from "../lib/auth/factor-checks";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import {
  decideDailySecondSteps,
  decideStepTry,
  decideTotpStep,
  hashRecoveryCode,
  SECOND_STEP_DAY_MS,
  SECOND_STEP_DAY_REFUSAL,
  SECOND_STEP_TTL_MS,
  type SecondFactor,
} from "../lib/domain/second-factors";
import { TOTP_SECRET_PURPOSE } from "../lib/auth/factor-checks";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

/** An id no account has (ids are version 8 UUIDs of a key's hash): the read an unknown address costs. */
const NO_USER = "00000000-0000-8000-8000-000000000000" as UserId;

type Ctx<P> = Context<P, RequestMeta>;

/** A login's pending second step, sealed for the server alone (lib/auth/sealed.ts) and handed to the client. */
interface PendingStep {
  id: string;
  userId: UserId;
  /**
   * Whether the first step's password was right, as 1 or 0: a value of one length either way (the
   * sealed token's length must not tell), and the second step answers the same for both.
   */
  pw: 0 | 1;
  /** The account's key version the password was compared against: a password change since refuses the step. */
  accountVersion: number;
  email: string;
  source: string;
  deviceName: string;
  /** The first step's counted attempts, given back when the second succeeds. */
  counted: string[];
  /** The WebAuthn challenge the security keys sign. */
  challenge?: string;
}
const STEP_PURPOSE = "login-second-step";

interface SecondStepParams {
  stepToken: string;
  totpCode?: string;
  recoveryCode?: string;
  webauthn?: Record<string, unknown>;
  deviceName?: string;
}

/** What a second step may answer with, as the account's factors allow. */
function factorMethods(factors: readonly SecondFactor[]): Array<"totp" | "webauthn" | "recovery-code"> {
  return [
    ...(factors.some((f) => f.kind === "totp") ? (["totp"] as const) : []),
    ...(factors.some((f) => f.kind === "webauthn") ? (["webauthn"] as const) : []),
    "recovery-code" as const,
  ];
}

interface RegisterParams extends KeyBundle {
  email: string;
  authHash: string;
  kdf: KdfParams;
  inviteToken?: string;
  orgName?: string;
  keyStatement?: SignedStatement;
  kdfStatement?: SignedStatement;
  inviteBinding?: string;
}

const INVITE_LOCK_MS = 30_000;

export function authService(rt: Runtime): ServiceSchema {
  const { store, config, counters, inviteTokens, events, metrics, clock } = rt;
  // Compared against for unknown emails, so they cost what a wrong hash costs.
  const decoyHash = hashAuthHash(Buffer.alloc(32), config.scryptCost);

  /**
   * What prelogin answers as the KDF statement of an address without one (unknown, or an account
   * not upgraded yet): 64 stable bytes from a server secret, which look like a signature to anyone
   * who does not hold the account's signing key. A device that does, and remembers the account's
   * parameters, never needs it: it checks a statement only when the parameters change.
   */
  function decoyStatement(address: string): SignedStatement {
    const bytes = Buffer.concat([rt.serverHmac("prelogin-kdf-statement-1", address), rt.serverHmac("prelogin-kdf-statement-2", address)]);
    return { version: STATEMENT_VERSION, signature: bytes.toString("base64") };
  }

  /** Prelogin and registration (without an invite) per client address. */
  const perAddress = (ctx: Ctx<unknown>, what: "prelogin" | "register") =>
    limitPerAddress(
      counters,
      ctx.meta.clientIp,
      addressLimit(what, what === "prelogin" ? config.preloginRateLimit : config.registerRateLimit),
      () => metrics.rateLimited(what),
    );

  const rp = { rpId: config.webauthnRpId, ...(config.webauthnOrigins && { origins: config.webauthnOrigins }) };

  /**
   * Counts one attempt on each counter, one after the other, stopping at the first that refuses:
   * an attempt refused by its own address's counters never counts against the account, so one
   * stranger's flood cannot use up what the owner, elsewhere, signs in within. Answers the keys counted.
   */
  async function countLoginAttempt(
    keys: [string, string, string],
    address: string,
    source: string,
    perEmail = config.loginEmailMaxFailures,
  ): Promise<string[]> {
    const window = config.loginFailureWindowMs;
    const limits = { perEmailAndAddress: config.loginMaxFailures, perAddress: config.loginAddressMaxFailures, perEmail };
    const known = (await counters.add(`login-known:${address}|${source}`, 0, KNOWN_ADDRESS_MS)).count > 0;
    const attempts = { emailAndAddress: 0, address: 0, email: 0, knownAddress: known };
    const counted: string[] = [];
    for (const [i, field] of (["emailAndAddress", "address", "email"] as const).entries()) {
      const w = await counters.add(keys[i]!, 1, window);
      counted.push(keys[i]!);
      attempts[field] = w.count;
      const verdict = decideLoginAttempt(attempts, limits);
      if (!verdict.ok) {
        metrics.rateLimited("login");
        throw rateLimited(LOGIN_REFUSAL_MESSAGE[verdict.refusal], retryAfterSec(w.resetInMs));
      }
    }
    return counted;
  }

  /** A successful sign-in gives its counts back, and keeps the address known for 30 days after its last one. */
  async function giveBack(counted: readonly string[], address: string, source: string): Promise<void> {
    await Promise.all(counted.map((k) => counters.add(k, -1, config.loginFailureWindowMs)));
    await counters.mark(`login-known:${address}|${source}`, KNOWN_ADDRESS_MS);
  }

  /**
   * Whether the answer of a second step is right, and (only after a right password) used up: a TOTP
   * code of a step after the last one used, an unused recovery code, or a security key's signature
   * over this step's challenge with a counter that moved on. Every kind of wrong answers false.
   */
  async function secondFactorHolds(step: PendingStep, factors: SecondFactor[], p: SecondStepParams): Promise<boolean> {
    const at = clock.timestamp();
    const given = [p.totpCode, p.recoveryCode, p.webauthn].filter((v) => v !== undefined).length;
    if (given !== 1) return false;
    // After a wrong password the same writes run, on ids that match nothing: neither the answer nor its time tells the two apart.
    const passwordOk = step.pw === 1;
    const nothing = "00000000-0000-4000-8000-000000000000";
    if (p.totpCode !== undefined) {
      const factor = factors.find((f) => f.kind === "totp");
      const secret = factor?.sealedSecret === undefined ? null : rt.sealer.open<string>(TOTP_SECRET_PURPOSE, factor.sealedSecret);
      if (!factor || secret === null) return false;
      let used: number;
      try {
        used = decideTotpStep(totpStep(secret, p.totpCode, clock.nowMs()), factor.lastStep);
      } catch {
        return false;
      }
      const usedUp = await store.security.useTotpStep({ factorId: passwordOk ? factor.factorId : nothing, step: used, at });
      return passwordOk && usedUp;
    }
    if (p.recoveryCode !== undefined) {
      const userId = (passwordOk ? step.userId : nothing) as UserId;
      const usedUp = await store.security.useRecoveryCode({ userId, codeHash: hashRecoveryCode(p.recoveryCode), at });
      return passwordOk && usedUp;
    }
    const response = p.webauthn as unknown as AuthenticationResponseJSON;
    const factor = factors.find((f) => f.kind === "webauthn" && f.credentialId === response?.id);
    if (!factor || step.challenge === undefined) return false;
    const counter = await verifyAuthentication(rp, step.challenge, response, factor);
    if (counter === null) return false;
    const from = factor.counter ?? 0;
    const usedUp = await store.security.useWebauthnCounter({ factorId: passwordOk ? factor.factorId : nothing, from, to: counter, at });
    return passwordOk && usedUp;
  }

  return {
    name: "auth",
    actions: {
      prelogin: {
        params: paramsOf("auth.prelogin"),
        async handler(ctx: Ctx<{ email: string; knownSigningKey?: string }>) {
          await perAddress(ctx, "prelogin");
          const address = normalizeEmail(ctx.params.email);
          const user = await store.accounts.findUserByEmail(address);
          // A named key costs the same read for an address with no account: the answer's time tells nothing more.
          if (!user && ctx.params.knownSigningKey !== undefined) await store.accounts.keyLog(NO_USER);
          if (user) {
            const answer = { kdf: user.kdf, kdfStatement: user.kdfStatement ?? decoyStatement(address) };
            // A device that knows keys this account had before a rotation gets its key log, to follow them to the key that
            // signed these parameters. Only one that names such a key: it knew of the account already.
            const known = ctx.params.knownSigningKey;
            if (known === undefined || known === user.signingPublicKey) return answer;
            const keyLog = await store.accounts.keyLog(user.userId);
            return keyLog.some((e) => e.signingPublicKey === known) ? { ...answer, keyLog } : answer;
          }
          // An unknown address answers what a new user of the SDK registers, with a salt derived
          // from the address and a server secret: stable, and alike in every field and in form.
          return { kdf: decoyKdf(rt.serverHmac("prelogin-salt", address)), kdfStatement: decoyStatement(address) };
        },
      },

      register: {
        params: paramsOf("auth.register"),
        async handler(ctx: Ctx<RegisterParams>) {
          const p = ctx.params;
          decideRegistrationOpen(config.registrationMode);
          // An invitee's registration is gated by its secret token: only the others count against the address.
          if (p.inviteToken === undefined) await perAddress(ctx, "register");
          const address = normalizeEmail(p.email);
          const tokenHash = p.inviteToken !== undefined ? hashToken(p.inviteToken) : undefined;
          const found = tokenHash ? await inviteTokens.find(tokenHash) : null;
          const now = clock.timestamp();
          const invite = decideRegistration({
            mode: config.registrationMode,
            tokenGiven: tokenHash !== undefined,
            invite: found,
            // Asked only where the answer matters: an invite-only server without an invite.
            hasUsers: !tokenHash && config.registrationMode === "invite" && (await store.accounts.hasUsers()),
            address,
            now,
          });
          const orgName = decideOrgName(p.orgName);
          checkKeyBundle(p);
          const kdf = normalizeKdf(p.kdf);
          checkKdf(kdf);
          // Derived from the signing key: the client knows it before this answer, and signed it into its statements.
          const userId = userIdForKey(p.signingPublicKey);
          const holder = { userId, email: address, publicKey: p.publicKey, signingPublicKey: p.signingPublicKey };
          if (p.keyStatement) checkKeyStatement(holder, p.keyStatement);
          if (p.kdfStatement) checkKdfStatement({ ...holder, kdf }, p.kdfStatement);
          if (p.inviteBinding !== undefined) checkInviteBinding(p.inviteBinding, invite !== null);

          const newUser: NewUser = {
            userId,
            email: address,
            authHash: await hashAuthHash(Buffer.from(p.authHash, "base64"), config.scryptCost),
            kdf,
            publicKey: p.publicKey,
            signingPublicKey: p.signingPublicKey,
            publicKeySignature: p.publicKeySignature,
            encryptedPrivateKey: p.encryptedPrivateKey,
            encryptedSigningPrivateKey: p.encryptedSigningPrivateKey,
            createdAt: now,
            keyStatement: p.keyStatement,
            kdfStatement: p.kdfStatement,
            inviteBinding: invite && p.inviteBinding !== undefined ? { inviteId: invite.inviteId, mac: p.inviteBinding } : undefined,
          };
          // An invitee's new password meets their organization's least KDF cost.
          if (invite) decideKdfAgainstPolicy(kdf, (await store.security.getPolicies(invite.orgId)) ?? DEFAULT_POLICIES);
          let user: UserRecord;
          if (invite && tokenHash) {
            // One redemption at a time per token; the store's conditional update decides for real.
            if (!(await inviteTokens.lockOnce(tokenHash, INVITE_LOCK_MS))) {
              throw inviteBeingRedeemed();
            }
            try {
              user = await store.accounts.registerWithInvite({
                user: newUser,
                inviteId: invite.inviteId,
                now: clock.timestamp(),
                events: [
                  events.record("invite.consumed", { actorId: userId, orgId: invite.orgId, inviteId: invite.inviteId }),
                  events.record("user.registered", { actorId: userId, orgId: invite.orgId, targetUserId: userId }),
                ],
              });
              await inviteTokens.forget(invite.inviteId);
            } finally {
              await inviteTokens.release(tokenHash);
            }
            metrics.inviteRedeemed();
          } else {
            const orgId = newId<OrgId>();
            user = await store.accounts.registerOwnerOfNewOrg({
              user: newUser,
              org: { orgId, name: orgName, createdAt: now },
              onlyIfFirstUser: config.registrationMode === "invite",
              events: [events.record("user.registered", { actorId: userId, orgId, targetUserId: userId })],
            });
          }
          events.kick();
          created(ctx, "/users/me");
          return { userId: user.userId, orgId: user.orgId, role: user.role };
        },
      },

      login: {
        params: paramsOf("auth.login"),
        async handler(ctx: Ctx<{ email: string; authHash: string; deviceName?: string }>) {
          const address = normalizeEmail(ctx.params.email);
          const deviceName = decideDeviceName(ctx.params.deviceName);
          const from = ctx.meta.clientIp ?? "unknown";
          const source = netKey(from);
          // Counted before the slow comparison, and given back on success (lib/domain/login-limits.ts).
          const counted = await countLoginAttempt(
            [`login:${address}|${source}`, `login-from:${source}`, `login-for:${address}`],
            address,
            source,
          );
          const user = await store.accounts.findUserByEmail(address);
          const presented = Buffer.from(ctx.params.authHash, "base64");
          const ok = await authHashMatches(presented, user ? user.authHash : await decoyHash);
          // Read for an unknown address too: the answer's time tells nothing more.
          const factors = await store.security.listFactors(user ? user.userId : NO_USER);
          if (user && factors.length > 0) {
            // A second step, whether or not the password was right: only both together sign in, and
            // neither step tells which was wrong (lib/domain/second-factors.ts). The counts stay until then.
            const webauthn = factors.some((f) => f.kind === "webauthn") ? await authenticationOptions(rp, factors) : undefined;
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
            return {
              secondFactorRequired: true as const,
              stepToken: rt.sealer.seal(STEP_PURPOSE, step, SECOND_STEP_TTL_MS),
              methods: factorMethods(factors),
              ...(webauthn && { webauthn }),
            };
          }
          if (!user || !ok) {
            metrics.loginFailed();
            throw wrongEmailOrPassword();
          }
          // Only who knows the password learns it: taken out of the organization, they sign in no more.
          if (user.removedAt !== undefined) throw removedFromOrg();
          await giveBack(counted, address, source);
          return signIn(rt, ctx, user, { deviceName, address: from, factorCount: factors.length });
        },
      },

      secondStep: {
        params: paramsOf("auth.secondStep"),
        async handler(ctx: Ctx<SecondStepParams>) {
          const p = ctx.params;
          const from = ctx.meta.clientIp ?? "unknown";
          const step = rt.sealer.open<PendingStep>(STEP_PURPOSE, p.stepToken);
          if (!step) throw tooManyStepTries();
          decideStepTry((await counters.add(`login-step:${step.id}`, 1, SECOND_STEP_TTL_MS)).count);
          const source = netKey(from);
          const counted = await countLoginAttempt(
            [`login-2fa:${step.userId}|${source}`, `login-from:${source}`, `login-2fa-for:${step.userId}`],
            step.email,
            source,
            // Codes are short: from all addresses together, an account's second step takes LOGIN_MAX_FAILURES guesses per
            // window (its owner's known addresses go on past it), not the password's higher per-account limit.
            config.loginMaxFailures,
          );
          // And per day: the window's limit alone lets a guesser with the password try about a thousand codes a day.
          const known = (await counters.add(`login-known:${step.email}|${source}`, 0, KNOWN_ADDRESS_MS)).count > 0;
          const daily = `login-2fa-day:${step.userId}`;
          const day = known ? null : await counters.add(daily, 1, SECOND_STEP_DAY_MS);
          if (day && !decideDailySecondSteps(day.count, config.loginMaxFailures)) {
            await counters.add(daily, -1, SECOND_STEP_DAY_MS);
            await Promise.all(counted.map((k) => counters.add(k, -1, config.loginFailureWindowMs)));
            metrics.rateLimited("login");
            throw rateLimited(SECOND_STEP_DAY_REFUSAL, retryAfterSec(day.resetInMs));
          }
          const factors = await store.security.listFactors(step.userId);
          const right = await secondFactorHolds(step, factors, p);
          const user = right ? await store.accounts.findUserById(step.userId) : null;
          if (!user || user.email !== step.email) {
            metrics.loginFailed();
            throw wrongPasswordOrCode();
          }
          // One sign-in per step, even when two right answers arrive at once.
          if ((await counters.add(`login-step-done:${step.id}`, 1, SECOND_STEP_TTL_MS)).count !== 1) throw tooManyStepTries();
          if (user.removedAt !== undefined) throw removedFromOrg();
          await giveBack([...step.counted, ...counted], step.email, source);
          if (day) await counters.add(daily, -1, SECOND_STEP_DAY_MS);
          // At the key version the first step's password was compared against: a password change since ends it (401).
          return signIn(rt, ctx, user, {
            deviceName: p.deviceName === undefined ? step.deviceName : decideDeviceName(p.deviceName),
            address: from,
            accountVersion: step.accountVersion,
            factorCount: factors.length,
          });
        },
      },

      refresh: {
        params: paramsOf("auth.refresh"),
        async handler(ctx: Ctx<{ refreshToken: string }>) {
          const next = newRefreshToken(rt);
          const outcome = await store.accounts.rotateRefreshToken({
            oldHash: hashToken(ctx.params.refreshToken),
            next,
            now: clock.timestamp(),
            address: ctx.meta.clientIp ?? "unknown",
          });
          if (!outcome.ok) {
            // A stolen token caught: the session ends, its access tokens with it.
            if (outcome.reason === "reused") await announceEnded(ctx, rt.sessions, [outcome.sessionId]);
            throw badRefreshToken(outcome.reason === "reused");
          }
          const user = await store.accounts.findUserById(outcome.userId);
          if (!user) throw refreshUserGone();
          // The organization's policy as it is now: a member without a factor under a new requirement may only enrol from here on.
          // (The session an account recovery opened stays whole: it must set the new password.)
          const enrolOnly =
            (await enrolOnlyFor(rt, user)) &&
            !(await store.security.findOpenedRecovery({
              userId: user.userId,
              sessionId: outcome.sessionId,
              since: new Date(clock.nowMs() - RECOVERY_PASSWORD_WINDOW_MS).toISOString(),
            }));
          const caller: Caller = { userId: user.userId, orgId: user.orgId, role: user.role, sessionId: outcome.sessionId };
          return tokenPair(rt, enrolOnly ? { ...caller, enrolOnly: true } : caller, next.token);
        },
      },

      logout: {
        params: paramsOf("auth.logout"),
        async handler(ctx: Ctx<{ refreshToken: string }>) {
          const caller = callerOf(ctx);
          const now = clock.timestamp();
          let ended = await store.accounts.endSessionOfToken({ tokenHash: hashToken(ctx.params.refreshToken), userId: caller.userId, now });
          // A refresh token that is not the caller's, or gone: the session the access token names ends all the same.
          if (ended === null && caller.sessionId !== undefined) {
            [ended = null] = await store.accounts.endSessions({ userId: caller.userId, now, only: caller.sessionId });
          }
          await announceEnded(ctx, rt.sessions, ended === null ? [] : [ended]);
          return noContent(ctx);
        },
      },

      // ---- The caller's sessions (README, "Sessions") ----

      sessions: {
        async handler(ctx: Ctx<unknown>) {
          const caller = callerOf(ctx);
          const sessions = await store.accounts.listSessions({ userId: caller.userId, now: clock.timestamp() });
          return { sessions: sessions.map((s) => sessionView(s, caller)) };
        },
      },

      endSession: {
        params: paramsOf("auth.endSession"),
        async handler(ctx: Ctx<{ sessionId: string }>) {
          const caller = callerOf(ctx);
          const now = clock.timestamp();
          decideSessionEnd(await store.accounts.findSession(ctx.params.sessionId), caller.userId, now);
          const ended = await store.accounts.endSessions({ userId: caller.userId, now, only: ctx.params.sessionId });
          await announceEnded(ctx, rt.sessions, ended);
          return noContent(ctx);
        },
      },

      endOtherSessions: {
        async handler(ctx: Ctx<unknown>) {
          const caller = callerOf(ctx);
          const ended = await store.accounts.endSessions({ userId: caller.userId, now: clock.timestamp(), except: caller.sessionId });
          await announceEnded(ctx, rt.sessions, ended);
          return { ended: ended.length };
        },
      },
    },
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(authService);
