/** The caller's profile, statements and master password, and other users' public keys (contract section 2). */
import { decideVisibleUser } from "../lib/domain/orgs/access";
import { requireUser } from "../lib/domain/accounts/users";
import type { UserId, VaultId } from "../lib/domain/ids";
import type { ServiceSchema } from "moleculer";
import { decideStatementUpgrade, type StatementUpgrade } from "../lib/domain/accounts/statement-upgrades";
import type { SignedStatement } from "../lib/domain/types";
import { callerOf, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { UserRecord } from "../lib/store/port";
import { publicKeysOf } from "../lib/http/views";
import type { Runtime } from "../lib/runtime";
import { hashAuthHash } from "../lib/auth/auth-hash";
import { proveCurrentPassword } from "../lib/auth/password-proof";
import { RECOVERY_PASSWORD_WINDOW_MS } from "../lib/domain/accounts/recovery";
import { decideKdfAgainstPolicy, DEFAULT_POLICIES } from "../lib/domain/orgs/policies";
import { normalizeKdf, type KdfParams } from "../lib/domain/accounts/keys";
import { checkPasswordChangeForm, decideAccountVersion, type PersonalRewrap } from "../lib/domain/accounts/password-change";
import { parseRosterLink, ROSTER_LINK_FIELD, type RosterLink } from "../lib/domain/vaults/roster";
import { withCheckedAuditClaim } from "../lib/audit-claims";
import { announceEnded } from "../lib/auth/session-check";
import { failpoint } from "../lib/failpoints";
import { checkKeyRotationForm, genesisEntry, keyLogHead, type KeyRotation, type VaultRotation } from "../lib/domain/accounts/key-rotation";
import type { PasskeyRewrap } from "../lib/domain/accounts/passkey-logins";
import { runnerService } from "../app/node-runtime";

type KeyRotationParams = Omit<KeyRotation, "keyLogEntry" | "vaults"> & {
  keyLogEntry: unknown;
  passkeys?: PasskeyRewrap[];
  vaults: Array<
    Omit<VaultRotation, "rosterLink" | "vaultId" | "resigned"> & {
      vaultId: string;
      rosterLink?: unknown;
      resigned: Array<{ userId: string; wrapSignature: string }>;
    }
  >;
};

interface PasswordChangeParams {
  currentAuthHash?: string;
  authHash: string;
  kdf: KdfParams;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
  kdfStatement: SignedStatement;
  accountVersion: number;
  passkeys?: PasskeyRewrap[];
  vaults: Array<Omit<PersonalRewrap, "rosterLink"> & { rosterLink?: unknown }>;
}

type UserParams = { userId: UserId };

export function usersService(rt: Runtime): ServiceSchema {
  return {
    name: "users",
    actions: {
      me: { handler: (ctx: Ctx) => me(rt, ctx) },
      keys: { params: paramsOf("users.keys"), handler: (ctx: Ctx<UserParams>) => keys(rt, ctx) },
      // An account made before statements existed is upgraded by its own client: it signs both
      // over what the server holds, and the server checks them against that before keeping them.
      statements: { params: paramsOf("users.statements"), handler: (ctx: Ctx<StatementUpgrade>) => statements(rt, ctx) },
      keyLog: { params: paramsOf("users.keyLog"), handler: (ctx: Ctx<UserParams>) => keyLog(rt, ctx) },
      // The rules: lib/domain/accounts/key-rotation.ts; the transaction: the store's rotateKeys.
      rotateKeys: { params: paramsOf("users.rotateKeys"), handler: (ctx: Ctx<KeyRotationParams>) => rotateKeys(rt, ctx) },
      // The rules: lib/domain/accounts/password-change.ts; the transaction: the store's changePassword.
      changePassword: {
        params: paramsOf("users.changePassword"),
        handler: (ctx: Ctx<PasswordChangeParams>) => changePassword(rt, ctx),
      },
    },
  };
}

/** The caller's account, read again: gone since the token was made is a 401. */
async function callerAccount({ store }: Runtime, ctx: Ctx): Promise<UserRecord> {
  return requireUser(await store.accounts.findUserById(callerOf(ctx).userId));
}

/** Each vault's roster link checked against the organization's audit log, in order. */
async function checkRosterLinks({ store }: Runtime, orgId: UserRecord["orgId"], vaults: Array<{ rosterLink?: RosterLink }>) {
  for (const [i, v] of vaults.entries()) {
    if (v.rosterLink) await withCheckedAuditClaim(store, orgId, `vaults.${i}.${ROSTER_LINK_FIELD}`, v.rosterLink);
  }
}

async function me(rt: Runtime, ctx: Ctx) {
  const user = await callerAccount(rt, ctx);
  return {
    userId: user.userId,
    email: user.email,
    orgId: user.orgId,
    role: user.role,
    createdAt: user.createdAt,
    accountVersion: user.accountVersion,
    kdf: user.kdf,
  };
}

async function keys({ store }: Runtime, ctx: Ctx<UserParams>) {
  // Users of other organizations do not exist for the caller.
  const user = decideVisibleUser(await store.accounts.findUserById(ctx.params.userId), callerOf(ctx));
  return publicKeysOf(user);
}

async function statements(rt: Runtime, ctx: Ctx<StatementUpgrade>) {
  const user = await callerAccount(rt, ctx);
  const { keyStatement, kdfStatement } = ctx.params;
  decideStatementUpgrade(user, { keyStatement, kdfStatement });
  await rt.store.accounts.setStatements({ userId: user.userId, keyStatement, kdfStatement });
  return noContent(ctx);
}

async function keyLog({ store }: Runtime, ctx: Ctx<UserParams>) {
  // As a key lookup: users of other organizations do not exist for the caller.
  const user = decideVisibleUser(await store.accounts.findUserById(ctx.params.userId), callerOf(ctx));
  const stored = await store.accounts.keyLog(user.userId);
  return { entries: stored.length > 0 ? stored : [genesisEntry(user.userId, user)] };
}

async function rotateKeys(rt: Runtime, ctx: Ctx<KeyRotationParams>) {
  const { store, clock, events } = rt;
  const { passkeys, ...p } = ctx.params;
  const user = await callerAccount(rt, ctx);
  const sessionId = callerOf(ctx).sessionId;
  decideAccountVersion(user.accountVersion, p.accountVersion);
  const vaults: VaultRotation[] = p.vaults.map(({ rosterLink, resigned, ...wrap }, i) => {
    const link = parseRosterLink(rosterLink, `vaults.${i}.${ROSTER_LINK_FIELD}`);
    return {
      ...wrap,
      vaultId: wrap.vaultId as VaultId,
      resigned: resigned.map((r) => ({ userId: r.userId as UserId, wrapSignature: r.wrapSignature })),
      ...(link && { rosterLink: link }),
    };
  });
  const head = keyLogHead(user, await store.accounts.keyLog(user.userId));
  const keyLogEntry = checkKeyRotationForm(user, head, { ...p, vaults });
  await checkRosterLinks(rt, user.orgId, vaults);
  const { endedSessions } = await store.accounts.rotateKeys({
    userId: user.userId,
    rotation: { ...p, keyLogEntry, vaults },
    passkeys: passkeys ?? [],
    headVersion: head.entry.version,
    keepSession: sessionId,
    now: clock.timestamp(),
    events: [events.record("user.keys_rotated", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
  });
  failpoint("key-rotation-after-commit");
  events.kick();
  await announceEnded(ctx, rt.sessions, endedSessions);
  return { accountVersion: p.accountVersion + 1, keyVersion: keyLogEntry.version, sessionsEnded: endedSessions.length };
}

/** In the session an account recovery began, and with no old password given, the recovery that stands for it (once). */
async function openedRecovery({ store, clock }: Runtime, user: UserRecord, sessionId: string | undefined, currentAuthHash?: string) {
  if (currentAuthHash !== undefined || sessionId === undefined) return null;
  return store.security.findOpenedRecovery({
    userId: user.userId,
    sessionId,
    since: new Date(clock.nowMs() - RECOVERY_PASSWORD_WINDOW_MS).toISOString(),
  });
}

/** In the session an emergency takeover opened, and with no old password given, the grant that stands for it (once). */
async function openedTakeover({ store, clock }: Runtime, user: UserRecord, sessionId: string | undefined, currentAuthHash?: string) {
  if (currentAuthHash !== undefined || sessionId === undefined) return null;
  return store.emergency.findTakeover({
    userId: user.userId,
    sessionId,
    since: new Date(clock.nowMs() - RECOVERY_PASSWORD_WINDOW_MS).toISOString(),
  });
}

async function changePassword(rt: Runtime, ctx: Ctx<PasswordChangeParams>) {
  const { store, config, clock, events } = rt;
  const p = ctx.params;
  const user = await callerAccount(rt, ctx);
  const sessionId = callerOf(ctx).sessionId;
  // From an older read of the account: refused before anything else (the statement's version would not be the next one either).
  decideAccountVersion(user.accountVersion, p.accountVersion);
  const kdf = normalizeKdf(p.kdf);
  const vaults: PersonalRewrap[] = p.vaults.map(({ rosterLink, ...wrap }, i) => {
    const link = parseRosterLink(rosterLink, `vaults.${i}.${ROSTER_LINK_FIELD}`);
    return { ...wrap, vaultId: wrap.vaultId as VaultId, ...(link && { rosterLink: link }) };
  });
  checkPasswordChangeForm(user, { kdf, kdfStatement: p.kdfStatement, vaults });
  decideKdfAgainstPolicy(kdf, (await store.security.getPolicies(user.orgId)) ?? DEFAULT_POLICIES);
  // The old password, proven; or, in the session an account recovery began, the recovery stands for it (once).
  const recovered = await openedRecovery(rt, user, sessionId, p.currentAuthHash);
  // Or, in the session a released takeover grant opened, the grant stands for it (once).
  const takeover = recovered ? null : await openedTakeover(rt, user, sessionId, p.currentAuthHash);
  if (!recovered && !takeover) await proveCurrentPassword(rt, user, sessionId, p.currentAuthHash ?? "");
  // Only a proven caller costs the store a read per link.
  await checkRosterLinks(rt, user.orgId, vaults);
  const { endedSessions } = await store.accounts.changePassword({
    userId: user.userId,
    change: { accountVersion: p.accountVersion, kdf, kdfStatement: p.kdfStatement, vaults },
    authHash: await hashAuthHash(Buffer.from(p.authHash, "base64"), config.scryptCost),
    encryptedPrivateKey: p.encryptedPrivateKey,
    encryptedSigningPrivateKey: p.encryptedSigningPrivateKey,
    passkeys: p.passkeys ?? [],
    provenAuthHash: user.authHash,
    keepSession: sessionId,
    // A recovery's new password completes it in the same transaction: its enrolment is spent.
    ...(recovered && { completeRecovery: recovered.requestId }),
    ...(takeover && { completeTakeover: takeover }),
    now: clock.timestamp(),
    events: [
      events.record("user.password_changed", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId }),
      ...(recovered ? [events.record("recovery.completed", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })] : []),
      ...(takeover ? [events.record("emergency.completed", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })] : []),
    ],
  });
  failpoint("password-change-after-commit");
  events.kick();
  await announceEnded(ctx, rt.sessions, endedSessions);
  return { accountVersion: p.accountVersion + 1, sessionsEnded: endedSessions.length };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(usersService);
