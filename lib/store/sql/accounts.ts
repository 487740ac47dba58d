/** Accounts on SQL (the port: ../port/accounts.ts; sessions: ./sessions.ts; MongoDB: ../mongo/accounts.ts). */
import { appendOrgLink } from "./org-log";
import { staleAccountVersion, recoveryNotPending } from "../../domain/accounts/refusals";
import { inviteNotRedeemable, userNotFound } from "../../domain/orgs/refusals";
import {
  decideFirstUser,
  decideInviteRedemption,
  decideKeyLogHead,
  decidePersonalVaultsLocked,
  decideRotationVaultsLocked,
  decideStatementSet,
} from "../../domain/store-checks";
import type { OrgId, UserId } from "../../domain/ids";
import { decidePasswordChange } from "../../domain/accounts/password-change";
import type { VaultSnapshot } from "../../domain/vaults/decisions";
import { failpoint } from "../../failpoints";
import { rewrapPasskeysIn } from "./passkey-logins";
import { lockAccount, memberVaultIds, personalVaultIds, replaceOwnWrap } from "./writes";
import { completeRecoveryIn } from "./recovery";
import { completeTakeoverIn, dropGrantsOfIn } from "./emergency";
import { grantNotFound } from "../../domain/emergency/refusals";
import { decideKeyRotation, keyLogHead, type KeyLogEntry } from "../../domain/accounts/key-rotation";
import { keyLogEntryBytes } from "../../../protocol/formats/key-log";
import { sha256Hex } from "../../domain/vaults/roster";
import type { Kdf, OrgRole, SignedStatement } from "../../domain/types";
import type { AccountStore, ArgsOf, NewUser, OrgRecord, UserRecord } from "../port";
import { chunks, type Db, type SqlContext } from "./context";
import { sql } from "./kysely";
import { decideOrgRemoval, decideVaultsAfterRemoval, type HeldVault } from "../../domain/orgs/membership";
import type { UsersTable } from "./schema";
import { toInvite } from "./invites";
import { insertKeyLogEntry, keyLogIn, lockHeldVaults, writeRotatedWraps } from "./key-log";
import { endSessionsIn } from "./sessions";
import { forgetDevicesIn } from "./remembered-devices";
import { writeOutbox } from "./outbox";

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

/** A statement column's value, parsed (null: none set). */
const parseStatement = (text: string | null): SignedStatement | null => (text === null ? null : (JSON.parse(text) as SignedStatement));

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
      decideFirstUser(onlyIfFirstUser, onlyIfFirstUser && (await anyUser(trx)));
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
      const row = await trx.selectFrom("invites").selectAll().where("invite_id", "=", inviteId).executeTakeFirst();
      const invite = decideInviteRedemption(row && toInvite(row), user.email, now);
      await this.c.assertNewUserFree(trx, user);
      // Conditional: of any number of concurrent redemptions, exactly one moves pending -> used.
      const used = await trx
        .updateTable("invites")
        .set({ status: "used", updated_at: now })
        .where("invite_id", "=", inviteId)
        .where("status", "=", "pending")
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) throw inviteNotRedeemable();
      const created = userRow(user, invite.orgId, invite.role);
      await trx.insertInto("users").values(created).execute();
      return toUser(created);
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

  async changePassword({
    userId,
    change,
    authHash,
    encryptedPrivateKey,
    encryptedSigningPrivateKey,
    passkeys,
    provenAuthHash,
    keepSession,
    completeRecovery,
    completeTakeover,
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
      if (!user) throw userNotFound();
      if (Number(swapped.numUpdatedRows) !== 1) throw staleAccountVersion(Number(user.account_version), change.accountVersion);
      // A personal vault made since the list above (its creation waited on the account) counts as missing.
      const heldNow = await personalVaultIds(trx, userId);
      const locked = decidePersonalVaultsLocked(heldNow, snapshots);
      const rosters = decidePasswordChange({ userId, accountVersion: change.accountVersion }, locked, change);
      for (const v of change.vaults) await replaceOwnWrap(trx, userId, v, rosters.get(v.vaultId), now);
      if (completeTakeover !== undefined) {
        if (!(await completeTakeoverIn(trx, { grantId: completeTakeover, sessionId: keepSession ?? "", grantorId: userId })))
          throw grantNotFound();
        // What signed the grantor in besides the password goes with it: the grantee holds none of it.
        await trx.deleteFrom("recovery_codes").where("user_id", "=", userId).execute();
        await trx.deleteFrom("second_factors").where("user_id", "=", userId).execute();
        await trx.deleteFrom("passkey_logins").where("user_id", "=", userId).execute();
      }
      // A takeover's re-wraps are of passkeys just deleted: none is kept.
      await rewrapPasskeysIn(trx, userId, completeTakeover === undefined ? (passkeys ?? []) : []);
      if (completeRecovery !== undefined && !(await completeRecoveryIn(trx, completeRecovery, now))) throw recoveryNotPending();
      failpoint("password-change-before-commit");
      // The devices that skipped the second step were trusted by the old password's holder: forgotten with it.
      await forgetDevicesIn(trx, userId);
      return { endedSessions: await endSessionsIn(trx, { userId, now, except: keepSession }) };
    });
  }

  async rotateKeys({ userId, rotation, passkeys, headVersion, keepSession, now, events }: ArgsOf<AccountStore["rotateKeys"]>): Promise<{
    endedSessions: string[];
  }> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const held = await lockHeldVaults(this.c, trx, userId);
      const version = await lockAccount(trx, userId);
      const row = await trx.selectFrom("users").selectAll().where("user_id", "=", userId).executeTakeFirst();
      if (!row) throw userNotFound();
      const stored = await keyLogIn(trx, userId);
      const head = keyLogHead(toUser(row), stored);
      decideKeyLogHead(head.entry.version, headVersion);
      // A vault shared with them since the list above (its write waited on the account) counts as missing.
      const heldNow = await memberVaultIds(trx, userId);
      const locked = decideRotationVaultsLocked(heldNow, held);
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
      await writeRotatedWraps(trx, userId, rotation, rosters, now);
      await rewrapPasskeysIn(trx, userId, passkeys ?? []);
      failpoint("key-rotation-before-commit");
      return { endedSessions: await endSessionsIn(trx, { userId, now, except: keepSession }) };
    });
  }

  async keyLog(userId: UserId): Promise<KeyLogEntry[]> {
    return keyLogIn(this.c.db, userId);
  }

  async removeFromOrg({ caller, targetId, now, orgLink, events }: ArgsOf<AccountStore["removeFromOrg"]>) {
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
      if (orgLink) await appendOrgLink(trx, caller.orgId, orgLink, "orgLink", now);
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
      await forgetDevicesIn(trx, targetId);
      // Their sends go with them: a link a removed member handed out opens nothing more.
      const theirs = trx.selectFrom("sends").select("send_id").where("owner_id", "=", targetId);
      await trx.deleteFrom("send_parts").where("send_id", "in", theirs).execute();
      await trx.deleteFrom("sends").where("owner_id", "=", targetId).execute();
      // Their emergency access grants, both ways: a session one opened as its grantor ends.
      const grantSessions = await dropGrantsOfIn(trx, targetId, now);
      return {
        vaults,
        endedSessions: [...grantSessions, ...(await endSessionsIn(trx, { userId: targetId, now }))],
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
        if (given === undefined) continue;
        const text = statementText(given);
        // Conditional: set only where none is, so that of two upgrades at once one sets it and the other compares.
        await trx
          .updateTable("users")
          .set({ [column]: text })
          .where("user_id", "=", userId)
          .where(column, "is", null)
          .execute();
        const row = await trx.selectFrom("users").select(column).where("user_id", "=", userId).executeTakeFirst();
        if (!row) throw userNotFound();
        decideStatementSet(parseStatement(row[column]), given, field);
      }
    });
  }
}

async function anyUser(db: Db): Promise<boolean> {
  return !!(await db.selectFrom("users").select("user_id").limit(1).executeTakeFirst());
}
