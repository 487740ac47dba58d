/** Registration, prelogin, login, refresh and logout (contract section 2), and the caller's sessions. */
import type { UserId } from "../lib/domain/ids";
import { newId, userIdForKey, type OrgId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { authHashMatches, hashAuthHash } from "../lib/auth/auth-hash";
import { timestamp } from "../lib/domain/encoding";
import { normalizeEmail } from "../lib/domain/email";
import { decideOrgName } from "../lib/domain/names";
import { decoyKdf } from "../lib/domain/decoy-kdf";
import { checkKdf, checkKeyBundle, normalizeKdf, type KdfParams, type KeyBundle } from "../lib/domain/keys";
import { decideRegistration, decideRegistrationOpen } from "../lib/domain/registration";
import { addressLimit, retryAfterSec } from "../lib/domain/address-limits";
import { hashToken, newOpaqueToken } from "../lib/domain/opaque-tokens";
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
  wrongEmailOrPassword,
} from "../lib/domain/refusals";
import { decideDeviceName, decideSessionEnd, MAX_LIVE_SESSIONS } from "../lib/domain/sessions";
import { announceEnded } from "../lib/auth/session-check";
import { sessionView } from "../lib/http/views";
import { decideLoginAttempt, KNOWN_ADDRESS_MS, LOGIN_REFUSAL_MESSAGE } from "../lib/domain/login-limits";
import type { NewUser, UserRecord } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";

/** An id no account has (ids are version 8 UUIDs of a key's hash): the read an unknown address costs. */
const NO_USER = "00000000-0000-8000-8000-000000000000" as UserId;

type Ctx<P> = Context<P, RequestMeta>;

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
  const { store, config, accessTokens, counters, inviteTokens, events, metrics, clock } = rt;
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

  function newRefreshToken() {
    const token = newOpaqueToken();
    const now = clock.nowMs();
    return {
      token,
      tokenHash: hashToken(token),
      createdAt: timestamp(new Date(now)),
      expiresAt: timestamp(new Date(now + config.refreshTokenTtlMs)),
    };
  }

  async function tokenPair(user: Pick<UserRecord, "userId" | "orgId" | "role">, sessionId: string, refreshToken: string) {
    const caller: Caller = { userId: user.userId, orgId: user.orgId, role: user.role, sessionId };
    return {
      accessToken: await accessTokens.issue(caller),
      refreshToken,
      tokenType: "Bearer" as const,
      expiresIn: accessTokens.lifetimeSec,
    };
  }

  /** Prelogin and registration (without an invite) per client address. */
  const perAddress = (ctx: Ctx<unknown>, what: "prelogin" | "register") =>
    limitPerAddress(
      counters,
      ctx.meta.clientIp,
      addressLimit(what, what === "prelogin" ? config.preloginRateLimit : config.registerRateLimit),
      () => metrics.rateLimited(what),
    );

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
          const window = config.loginFailureWindowMs;
          // Counted before the slow comparison, and given back on success: of a burst of any size,
          // at most the limits' attempts are ever compared (the model: lib/domain/login-limits.ts).
          // Counted one after the other, stopping at the first that refuses: an attempt refused by
          // its own address's counters never counts against the email, so one stranger's flood of
          // refused attempts cannot use up what the owner, elsewhere, signs in within.
          const source = netKey(from);
          const keys = [`login:${address}|${source}`, `login-from:${source}`, `login-for:${address}`];
          const limits = {
            perEmailAndAddress: config.loginMaxFailures,
            perAddress: config.loginAddressMaxFailures,
            perEmail: config.loginEmailMaxFailures,
          };
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
          const user = await store.accounts.findUserByEmail(address);
          const presented = Buffer.from(ctx.params.authHash, "base64");
          const ok = await authHashMatches(presented, user ? user.authHash : await decoyHash);
          if (!user || !ok) {
            metrics.loginFailed();
            throw wrongEmailOrPassword();
          }
          // Only who knows the password learns it: taken out of the organization, they sign in no more.
          if (user.removedAt !== undefined) throw removedFromOrg();
          await Promise.all(counted.map((k) => counters.add(k, -1, window)));
          // Renewed at every sign-in: an address stays known for 30 days after its last one.
          await counters.mark(`login-known:${address}|${source}`, KNOWN_ADDRESS_MS);
          const refresh = newRefreshToken();
          const sessionId = newId();
          const { ended } = await store.accounts.startSession({
            accountVersion: user.accountVersion,
            maxLive: MAX_LIVE_SESSIONS,
            session: {
              sessionId,
              userId: user.userId,
              deviceName,
              createdAt: refresh.createdAt,
              lastUsedAt: refresh.createdAt,
              address: from,
              expiresAt: refresh.expiresAt,
            },
            token: { tokenHash: refresh.tokenHash, userId: user.userId, createdAt: refresh.createdAt, expiresAt: refresh.expiresAt },
          });
          await announceEnded(ctx, rt.sessions, ended);
          // An account that rotated its keys: its devices follow the log from the keys they knew.
          const keyLog = await store.accounts.keyLog(user.userId);
          return {
            ...(await tokenPair(user, sessionId, refresh.token)),
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
          };
        },
      },

      refresh: {
        params: paramsOf("auth.refresh"),
        async handler(ctx: Ctx<{ refreshToken: string }>) {
          const next = newRefreshToken();
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
          return tokenPair(user, outcome.sessionId, next.token);
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
