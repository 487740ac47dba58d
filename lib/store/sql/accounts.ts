/** Accounts and sessions on SQL (the port: ../port/accounts.ts; MongoDB: ../mongo/accounts.ts). */
import { inviteRequired, notTheInvitedEmail } from "../../domain/refusals";
import type { OrgId, UserId } from "../../domain/ids";
import { conflict, notFound, notRedeemable } from "../../errors";
import { isRedeemable, type InviteStatus } from "../../domain/invites";
import type { Kdf, OrgRole, SignedStatement } from "../../domain/types";
import type { AccountStore, ArgsOf, NewUser, OrgRecord, RefreshOutcome, UserRecord } from "../port";
import type { Db, SqlContext } from "./context";
import type { UsersTable } from "./schema";
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

  async saveRefreshToken(t: ArgsOf<AccountStore["saveRefreshToken"]>): Promise<void> {
    await this.c.db
      .insertInto("refresh_tokens")
      .values({
        token_hash: t.tokenHash,
        family_id: t.familyId,
        user_id: t.userId,
        status: "active",
        expires_at: t.expiresAt,
        created_at: t.createdAt,
      })
      .execute();
  }

  async rotateRefreshToken({ oldHash, next, now }: ArgsOf<AccountStore["rotateRefreshToken"]>): Promise<RefreshOutcome> {
    return this.c.tx(async (trx): Promise<RefreshOutcome> => {
      const old = await trx.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", oldHash).executeTakeFirst();
      if (!old) return { ok: false, reason: "unknown" };
      const rotated =
        old.status === "active"
          ? await trx
              .updateTable("refresh_tokens")
              .set({ status: "used" })
              .where("token_hash", "=", oldHash)
              .where("status", "=", "active")
              .executeTakeFirst()
          : undefined;
      if (!rotated || Number(rotated.numUpdatedRows) !== 1) {
        // A used (or revoked) token presented again: whoever holds it, that login is over.
        await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", old.family_id).execute();
        return { ok: false, reason: "reused" };
      }
      if (old.expires_at <= now) return { ok: false, reason: "expired" };
      await trx
        .insertInto("refresh_tokens")
        .values({
          token_hash: next.tokenHash,
          family_id: old.family_id,
          user_id: old.user_id,
          status: "active",
          expires_at: next.expiresAt,
          created_at: next.createdAt,
        })
        .execute();
      return { ok: true, userId: old.user_id };
    });
  }

  async revokeRefreshFamily({ tokenHash, userId }: ArgsOf<AccountStore["revokeRefreshFamily"]>): Promise<void> {
    const db = this.c.db;
    const token = await db
      .selectFrom("refresh_tokens")
      .select("family_id")
      .where("token_hash", "=", tokenHash)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    if (token) await db.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", token.family_id).execute();
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

async function anyUser(db: Db): Promise<boolean> {
  return !!(await db.selectFrom("users").select("user_id").limit(1).executeTakeFirst());
}
