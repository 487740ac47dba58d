/** Accounts and sessions on SQL (the port: ../port/accounts.ts; MongoDB: ../mongo/accounts.ts). */
import {
  inviteRequired,
  notTheInvitedEmail,
  passwordChangedMeanwhile,
  keyLogEntryStale,
  personalVaultsChanged,
  rotationVaultsChanged,
  staleAccountVersion,
  recoveryNotPending,
} from "../../domain/refusals";
import type { OrgId, UserId } from "../../domain/ids";
import { decidePasswordChange } from "../../domain/password-change";
import type { VaultSnapshot } from "../../domain/vault-decisions";
import { failpoint } from "../../failpoints";
import { lockAccount, memberVaultIds, personalVaultIds, replaceOwnWrap } from "./writes";
import { completeRecoveryIn } from "./security";
import { decideKeyRotation, keyLogHead, type HeldVault as HeldRotationVault, type KeyLogEntry } from "../../domain/key-rotation";
import { keyLogEntryBytes } from "../../../protocol/formats/key-log";
import { sha256Hex } from "../../domain/roster";
import { conflict, notFound, notRedeemable } from "../../errors";
import { isRedeemable, type InviteStatus } from "../../domain/invites";
import type { Kdf, OrgRole, SignedStatement } from "../../domain/types";
import { earlierSession, sessionsOverCap } from "../../domain/sessions";
import type { AccountStore, ArgsOf, NewUser, OrgRecord, RefreshOutcome, SessionRecord, UserRecord } from "../port";
import { chunks, type Db, type SqlContext } from "./context";
import { sql } from "./kysely";
import { decideOrgRemoval, decideVaultsAfterRemoval, type HeldVault } from "../../domain/org-membership";
import type { SessionsTable, UsersTable } from "./schema";
import { writeOutbox } from "./outbox";

type EndSessions = ArgsOf<AccountStore["endSessions"]> & { ids?: string[] };

export function toUser(r: UsersTable): UserRecord {
  return {
    userId: r.user_id,
    orgId: r.org_id,
    email: r.email,
    role: r.org_role,
    authHash: r.auth_hash,
    kdf: JSON.parse(r.kdf) as Kdf,
    publicKey: r.public_key,
    signingPublicKey: r.signing_public_key,
    publicKeySignature: r.public_key_signature,
    encryptedPrivateKey: r.encrypted_private_key,
    encryptedSigningPrivateKey: r.encrypted_signing_private_key,
    createdAt: r.created_at,
    accountVersion: Number(r.account_version),
    ...(r.removed_at !== null && r.removed_at !== undefined && { removedAt: r.removed_at }),
    ...optionalJson("keyStatement", r.key_statement),
    ...optionalJson("kdfStatement", r.kdf_statement),
    ...optionalJson("inviteBinding", r.invite_binding),
  };
}

/** `{ [field]: parsed }` for a JSON column that holds a value, `{}` for null: absent fields stay absent. */
function optionalJson<K extends "keyStatement" | "kdfStatement" | "inviteBinding">(field: K, text: string | null): Pick<UserRecord, K> {
  return (text === null ? {} : { [field]: JSON.parse(text) }) as Pick<UserRecord, K>;
}

/** A statement as its column holds it: version, then signature, whatever order the request had. */
const statementText = (s: SignedStatement | undefined): string | null =>
  s === undefined ? null : JSON.stringify({ version: s.version, signature: s.signature });

function userRow(user: NewUser, orgId: OrgId, role: OrgRole): UsersTable {
  return {
    user_id: user.userId,
    org_id: orgId,
    email: user.email,
    org_role: role,
    auth_hash: user.authHash,
    kdf: JSON.stringify(user.kdf),
    public_key: user.publicKey,
    signing_public_key: user.signingPublicKey,
    public_key_signature: user.publicKeySignature,
    encrypted_private_key: user.encryptedPrivateKey,
    encrypted_signing_private_key: user.encryptedSigningPrivateKey,
    created_at: user.createdAt,
    key_statement: statementText(user.keyStatement),
    kdf_statement: statementText(user.kdfStatement),
    invite_binding: user.inviteBinding ? JSON.stringify({ inviteId: user.inviteBinding.inviteId, mac: user.inviteBinding.mac }) : null,
    account_version: 1,
    removed_at: null,
  };
}

export class SqlAccounts implements AccountStore {
  constructor(private readonly c: SqlContext) {}

  async registerOwnerOfNewOrg({ user, org, onlyIfFirstUser, events }: ArgsOf<AccountStore["registerOwnerOfNewOrg"]>): Promise<UserRecord> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      await this.c.engine.lockRegistrations(trx);
      if (onlyIfFirstUser && (await anyUser(trx))) throw inviteRequired();
      await this.c.assertNewUserFree(trx, user);
      await trx.insertInto("orgs").values({ org_id: org.orgId, name: org.name, created_at: org.createdAt }).execute();
      const row = userRow(user, org.orgId, "owner");
      await trx.insertInto("users").values(row).execute();
      return toUser(row);
    });
  }

  async registerWithInvite({ user, inviteId, now, events }: ArgsOf<AccountStore["registerWithInvite"]>): Promise<UserRecord> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      await this.c.engine.lockRegistrations(trx);
      const invite = await trx.selectFrom("invites").selectAll().where("invite_id", "=", inviteId).executeTakeFirst();
      if (!invite) throw notFound("Invite");
      if (!isRedeemable({ status: invite.status as InviteStatus, expiresAt: invite.expires_at }, now)) {
        throw notRedeemable();
      }
      if (invite.email !== user.email) throw notTheInvitedEmail();
      await this.c.assertNewUserFree(trx, user);
      // Conditional: of any number of concurrent redemptions, exactly one moves pending -> used.
      const used = await trx
        .updateTable("invites")
        .set({ status: "used", updated_at: now })
        .where("invite_id", "=", inviteId)
        .where("status", "=", "pending")
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) throw notRedeemable();
      const row = userRow(user, invite.org_id, invite.role);
      await trx.insertInto("users").values(row).execute();
      return toUser(row);
    });
  }

  async hasUsers(): Promise<boolean> {
    return anyUser(this.c.db);
  }

  async findUserByEmail(email: string): Promise<UserRecord | null> {
    const row = await this.c.db.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async findUserById(userId: UserId): Promise<UserRecord | null> {
    const row = await this.c.db.selectFrom("users").selectAll().where("user_id", "=", userId).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async getOrg(orgId: OrgId): Promise<OrgRecord | null> {
    const row = await this.c.db.selectFrom("orgs").selectAll().where("org_id", "=", orgId).executeTakeFirst();
    return row ? { orgId: row.org_id, name: row.name, createdAt: row.created_at } : null;
  }

  async listOrgMembers(orgId: OrgId): Promise<UserRecord[]> {
    const rows = await this.c.db
      .selectFrom("users")
      .selectAll()
      .where("org_id", "=", orgId)
      .orderBy("created_at")
      .orderBy("user_id")
      .execute();
    return rows.map(toUser);
  }

  async startSession({ session, token, accountVersion, maxLive }: ArgsOf<AccountStore["startSession"]>): Promise<{ ended: string[] }> {
    return this.c.tx(async (trx) => {
      // Under the account's row lock: a password change and this login come one after the other.
      if ((await lockAccount(trx, session.userId)) !== accountVersion) throw passwordChangedMeanwhile();
      await trx.insertInto("sessions").values(sessionRow(session)).execute();
      await trx
        .insertInto("refresh_tokens")
        .values({
          token_hash: token.tokenHash,
          family_id: session.sessionId,
          user_id: token.userId,
          status: "active",
          expires_at: token.expiresAt,
          created_at: token.createdAt,
        })
        .execute();
      const live = await trx
        .selectFrom("sessions")
        .select("session_id")
        .where("user_id", "=", session.userId)
        .where("ended_at", "is", null)
        .orderBy("last_used_at", "desc")
        .orderBy("session_id")
        .execute();
      const over = sessionsOverCap(
        live.map((r) => r.session_id),
        maxLive,
      );
      return { ended: over.length ? await endSessionsIn(trx, { userId: session.userId, now: session.createdAt, ids: over }) : [] };
    });
  }

  async rotateRefreshToken({ oldHash, next, now, address }: ArgsOf<AccountStore["rotateRefreshToken"]>): Promise<RefreshOutcome> {
    return this.c.tx(async (trx): Promise<RefreshOutcome> => {
      const old = await trx.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", oldHash).executeTakeFirst();
      if (!old) return { ok: false, reason: "unknown" };
      const sessionId = old.family_id;
      // Locks in one order everywhere (the session's row, then its tokens), as endSessions takes them.
      const reused = async (): Promise<RefreshOutcome> => {
        // A used (or revoked) token presented again: whoever holds it, that login is over.
        await trx
          .updateTable("sessions")
          .set({ ended_at: now })
          .where("session_id", "=", sessionId)
          .where("ended_at", "is", null)
          .execute();
        await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", sessionId).execute();
        return { ok: false, reason: "reused", sessionId };
      };
      if (old.status !== "active") return reused();
      if (old.expires_at <= now) {
        await trx.updateTable("refresh_tokens").set({ status: "used" }).where("token_hash", "=", oldHash).execute();
        return { ok: false, reason: "expired" };
      }
      // The session's row is written (and so locked) before the token: an end that races this
      // either came first (no live row: refused) or waits, and then revokes the new token too.
      const live = await trx
        .updateTable("sessions")
        .set({ last_used_at: now, address, expires_at: next.expiresAt })
        .where("session_id", "=", sessionId)
        .where("ended_at", "is", null)
        .executeTakeFirst();
      if (Number(live.numUpdatedRows) !== 1) {
        const ended = await trx.selectFrom("sessions").select("session_id").where("session_id", "=", sessionId).executeTakeFirst();
        if (ended) return { ok: false, reason: "unknown" };
        await trx
          .insertInto("sessions")
          .values(
            sessionRow({
              ...earlierSession({ sessionId, userId: old.user_id, createdAt: old.created_at }),
              lastUsedAt: now,
              address,
              expiresAt: next.expiresAt,
            }),
          )
          // Two first refreshes at once: the second finds the row and loses below, as a reuse.
          .onConflict((oc) => oc.column("session_id").doNothing())
          .execute();
      }
      const rotated = await trx
        .updateTable("refresh_tokens")
        .set({ status: "used" })
        .where("token_hash", "=", oldHash)
        .where("status", "=", "active")
        .executeTakeFirst();
      // Another rotation of this token won meanwhile: it was presented twice.
      if (Number(rotated.numUpdatedRows) !== 1) return reused();
      await trx
        .insertInto("refresh_tokens")
        .values({
          token_hash: next.tokenHash,
          family_id: sessionId,
          user_id: old.user_id,
          status: "active",
          expires_at: next.expiresAt,
          created_at: next.createdAt,
        })
        .execute();
      return { ok: true, userId: old.user_id, sessionId };
    });
  }

  async findSession(sessionId: string): Promise<SessionRecord | null> {
    const row = await this.c.db.selectFrom("sessions").selectAll().where("session_id", "=", sessionId).executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async listSessions({ userId, now }: ArgsOf<AccountStore["listSessions"]>): Promise<SessionRecord[]> {
    const rows = await this.c.db
      .selectFrom("sessions")
      .selectAll()
      .where("user_id", "=", userId)
      .where("ended_at", "is", null)
      .where("expires_at", ">", now)
      .orderBy("last_used_at", "desc")
      .orderBy("session_id")
      .execute();
    return rows.map(toSession);
  }

  async endSessions(args: ArgsOf<AccountStore["endSessions"]>): Promise<string[]> {
    return this.c.tx((trx) => endSessionsIn(trx, args));
  }

  async changePassword({
    userId,
    change,
    authHash,
    encryptedPrivateKey,
    encryptedSigningPrivateKey,
    provenAuthHash,
    keepSession,
    completeRecovery,
    now,
    events,
  }: ArgsOf<AccountStore["changePassword"]>): Promise<{ endedSessions: string[] }> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      // The personal vaults first, each locked in id order (as a rekey locks its vault before the account).
      const personal = await personalVaultIds(trx, userId);
      const snapshots: VaultSnapshot[] = [];
      for (const vaultId of personal) {
        const snap = await this.c.snapshot(trx, vaultId);
        if (snap) snapshots.push(snap);
      }
      // The compare-and-swap, which also locks the account: of two changes, the second finds the version moved.
      const swapped = await trx
        .updateTable("users")
        .set({
          account_version: change.accountVersion + 1,
          auth_hash: authHash,
          kdf: JSON.stringify(change.kdf),
          encrypted_private_key: encryptedPrivateKey,
          encrypted_signing_private_key: encryptedSigningPrivateKey,
          kdf_statement: statementText(change.kdfStatement),
        })
        .where("user_id", "=", userId)
        .where("account_version", "=", change.accountVersion)
        .where("auth_hash", "=", provenAuthHash)
        .executeTakeFirst();
      const user = await trx.selectFrom("users").select("account_version").where("user_id", "=", userId).executeTakeFirst();
      if (!user) throw notFound("User");
      if (Number(swapped.numUpdatedRows) !== 1) throw staleAccountVersion(Number(user.account_version), change.accountVersion);
      // A personal vault made since the list above (its creation waited on the account) counts as missing.
      const heldNow = await personalVaultIds(trx, userId);
      const locked = snapshots.filter((s) => heldNow.includes(s.vault.vaultId));
      if (heldNow.length !== locked.length) throw personalVaultsChanged(heldNow.length - locked.length, 0);
      const rosters = decidePasswordChange({ userId, accountVersion: change.accountVersion }, locked, change);
      for (const v of change.vaults) await replaceOwnWrap(trx, userId, v, rosters.get(v.vaultId), now);
      if (completeRecovery !== undefined && !(await completeRecoveryIn(trx, completeRecovery, now))) throw recoveryNotPending();
      failpoint("password-change-before-commit");
      return { endedSessions: await endSessionsIn(trx, { userId, now, except: keepSession }) };
    });
  }

  async rotateKeys({ userId, rotation, headVersion, keepSession, now, events }: ArgsOf<AccountStore["rotateKeys"]>): Promise<{
    endedSessions: string[];
  }> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      // Every vault they are in, each locked in id order (as every vault write locks its vault before the account).
      const held: HeldRotationVault[] = [];
      for (const vaultId of await memberVaultIds(trx, userId)) {
        const snapshot = await this.c.snapshot(trx, vaultId);
        if (!snapshot) continue;
        const sentWraps = await trx
          .selectFrom("vault_members")
          .select(["user_id", "encrypted_vault_key"])
          .where("vault_id", "=", vaultId)
          .where("sender_id", "=", userId)
          .execute();
        held.push({ snapshot, sentWraps: sentWraps.map((w) => ({ userId: w.user_id, encryptedVaultKey: w.encrypted_vault_key })) });
      }
      const version = await lockAccount(trx, userId);
      const row = await trx.selectFrom("users").selectAll().where("user_id", "=", userId).executeTakeFirst();
      if (!row) throw notFound("User");
      const before = toUser(row);
      const stored = await keyLogIn(trx, userId);
      const head = keyLogHead(before, stored);
      if (head.entry.version !== headVersion) throw keyLogEntryStale(head.entry.version);
      // A vault shared with them since the list above (its write waited on the account) counts as missing.
      const heldNow = await memberVaultIds(trx, userId);
      const locked = held.filter((h) => heldNow.includes(h.snapshot.vault.vaultId));
      if (heldNow.length !== locked.length) throw rotationVaultsChanged(heldNow.length - locked.length, 0);
      const rosters = decideKeyRotation({ userId, accountVersion: version }, locked, rotation);
      const entry = rotation.keyLogEntry;
      if (stored.length === 0) await insertKeyLogEntry(trx, head.entry, head.hash, now);
      await insertKeyLogEntry(trx, entry, sha256Hex(keyLogEntryBytes(entry)), now);
      await trx
        .updateTable("users")
        .set({
          account_version: version + 1,
          public_key: entry.publicKey,
          signing_public_key: entry.signingPublicKey,
          public_key_signature: entry.publicKeySignature,
          encrypted_private_key: rotation.encryptedPrivateKey,
          encrypted_signing_private_key: rotation.encryptedSigningPrivateKey,
          key_statement: statementText(rotation.keyStatement),
          kdf_statement: statementText(rotation.kdfStatement),
        })
        .where("user_id", "=", userId)
        .execute();
      for (const v of rotation.vaults) {
        await replaceOwnWrap(trx, userId, v, rosters.get(v.vaultId), now);
        for (const r of v.resigned)
          await trx
            .updateTable("vault_members")
            .set({ wrap_signature: r.wrapSignature })
            .where("vault_id", "=", v.vaultId)
            .where("user_id", "=", r.userId)
            .where("sender_id", "=", userId)
            .execute();
      }
      failpoint("key-rotation-before-commit");
      return { endedSessions: await endSessionsIn(trx, { userId, now, except: keepSession }) };
    });
  }

  async keyLog(userId: UserId): Promise<KeyLogEntry[]> {
    return keyLogIn(this.c.db, userId);
  }

  async endSessionOfToken({ tokenHash, userId, now }: ArgsOf<AccountStore["endSessionOfToken"]>): Promise<string | null> {
    return this.c.tx(async (trx) => {
      const token = await trx
        .selectFrom("refresh_tokens")
        .select(["family_id", "created_at"])
        .where("token_hash", "=", tokenHash)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (!token) return null;
      // The session's row, ended; written (so locked) before the tokens, as a rotation writes it. A family
      // whose row was never made gets one, ended: a first refresh racing this then finds it.
      await trx
        .insertInto("sessions")
        .values({
          ...sessionRow({
            ...earlierSession({ sessionId: token.family_id, userId, createdAt: token.created_at }),
            lastUsedAt: now,
            address: "unknown",
            expiresAt: now,
          }),
          ended_at: now,
        })
        .onConflict((oc) => oc.column("session_id").doUpdateSet({ ended_at: now }).where("sessions.ended_at", "is", null))
        .execute();
      await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", token.family_id).execute();
      return token.family_id;
    });
  }

  async touchSession({ sessionId, at, address }: ArgsOf<AccountStore["touchSession"]>): Promise<void> {
    await this.c.db
      .updateTable("sessions")
      .set({ last_used_at: at, address })
      .where("session_id", "=", sessionId)
      .where("ended_at", "is", null)
      .where("last_used_at", "<", at)
      .execute();
  }

  async removeFromOrg({ caller, targetId, now, events }: ArgsOf<AccountStore["removeFromOrg"]>) {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      // Every vault they are in, locked in id order (as every vault write locks its vault before an account).
      const vaultIds = await trx
        .selectFrom("vault_members")
        .select("vault_id")
        .where("user_id", "=", targetId)
        .orderBy("vault_id")
        .execute();
      const held: HeldVault[] = [];
      for (const { vault_id } of vaultIds) {
        const snap = await this.c.snapshot(trx, vault_id);
        const them = snap?.members.find((m) => m.userId === targetId);
        if (!snap || !them) continue;
        const others = snap.members.filter((m) => m.userId !== targetId && !m.removed).map((m) => ({ userId: m.userId, role: m.role }));
        held.push({ vaultId: vault_id, type: snap.vault.type, role: them.role, others });
      }
      // The organization's removals one at a time (its row locked), so that two owners cannot remove each other.
      await trx
        .updateTable("orgs")
        .set({ name: sql`name` })
        .where("org_id", "=", caller.orgId)
        .execute();
      await lockAccount(trx, targetId);
      const row = await trx.selectFrom("users").selectAll().where("user_id", "=", targetId).executeTakeFirst();
      const owners = await trx
        .selectFrom("users")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("org_id", "=", caller.orgId)
        .where("org_role", "=", "owner")
        .where("removed_at", "is", null)
        .executeTakeFirst();
      const target = row ? toUser(row) : null;
      decideOrgRemoval(caller, target && { ...target, orgId: target.orgId }, Number(owners?.n ?? 0));
      const vaults = decideVaultsAfterRemoval(held);
      await trx.updateTable("users").set({ removed_at: now }).where("user_id", "=", targetId).execute();
      const toRekey = vaults.filter((v) => v.needs === "rekey").map((v) => v.vaultId);
      for (const chunk of chunks(toRekey, 500)) {
        await trx.updateTable("vaults").set({ rekey_required: 1, updated_at: now }).where("vault_id", "in", chunk).execute();
      }
      const revoked = await trx
        .updateTable("invites")
        .set({ status: "revoked", updated_at: now })
        .where("inviter_id", "=", targetId)
        .where("status", "=", "pending")
        .returning("invite_id")
        .execute();
      return {
        vaults,
        endedSessions: await endSessionsIn(trx, { userId: targetId, now }),
        revokedInvites: revoked.map((r) => r.invite_id),
      };
    });
  }

  async setStatements({ userId, keyStatement, kdfStatement }: ArgsOf<AccountStore["setStatements"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      for (const [column, given, field] of [
        ["key_statement", keyStatement, "keyStatement"],
        ["kdf_statement", kdfStatement, "kdfStatement"],
      ] as const) {
        const text = statementText(given);
        if (text === null) continue;
        // Conditional: set only where none is, so that of two upgrades at once one sets it and the other compares.
        await trx
          .updateTable("users")
          .set({ [column]: text })
          .where("user_id", "=", userId)
          .where(column, "is", null)
          .execute();
        const row = await trx.selectFrom("users").select(column).where("user_id", "=", userId).executeTakeFirst();
        if (!row) throw notFound("User");
        if (row[column] !== text) throw conflict("This account's statement is already set: a changed one needs a key change", field);
      }
    });
  }
}

function sessionRow(s: Omit<SessionRecord, "endedAt">): SessionsTable {
  return {
    session_id: s.sessionId,
    user_id: s.userId,
    device_name: s.deviceName,
    created_at: s.createdAt,
    last_used_at: s.lastUsedAt,
    address: s.address,
    expires_at: s.expiresAt,
    ended_at: null,
  };
}

function toSession(r: SessionsTable): SessionRecord {
  return {
    sessionId: r.session_id,
    userId: r.user_id,
    deviceName: r.device_name,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    address: r.address,
    expiresAt: r.expires_at,
    ...(r.ended_at !== null && { endedAt: r.ended_at }),
  };
}

/**
 * Ends the user's live sessions (all, the `only` one, all but the `except` one, or the `ids`) and
 * revokes their refresh tokens, in the caller's transaction: the rows first (this locks them
 * against a rotation), then every token of their families; in chunks, whatever their number.
 */
async function endSessionsIn(trx: Db, { userId, now, only, except, ids: given }: EndSessions): Promise<string[]> {
  let live = trx.selectFrom("sessions").select("session_id").where("user_id", "=", userId).where("ended_at", "is", null);
  if (only !== undefined) live = live.where("session_id", "=", only);
  if (except !== undefined) live = live.where("session_id", "!=", except);
  if (given !== undefined) live = live.where("session_id", "in", given.length ? given : [""]);
  const ids = (await live.execute()).map((r) => r.session_id);
  for (const chunk of chunks(ids, 500)) {
    await trx.updateTable("sessions").set({ ended_at: now }).where("session_id", "in", chunk).where("ended_at", "is", null).execute();
    await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "in", chunk).execute();
  }
  return ids;
}

async function anyUser(db: Db): Promise<boolean> {
  return !!(await db.selectFrom("users").select("user_id").limit(1).executeTakeFirst());
}

/** The user's stored key log, oldest first. */
async function keyLogIn(db: Db, userId: UserId): Promise<KeyLogEntry[]> {
  const rows = await db.selectFrom("key_log").select("entry").where("user_id", "=", userId).orderBy("version").execute();
  return rows.map((r) => JSON.parse(r.entry) as KeyLogEntry);
}

async function insertKeyLogEntry(trx: Db, entry: KeyLogEntry, hash: string, now: string): Promise<void> {
  await trx
    .insertInto("key_log")
    .values({ user_id: entry.userId as UserId, version: entry.version, hash, entry: JSON.stringify(entry), created_at: now })
    .execute();
}
