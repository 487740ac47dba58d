/** Invites on SQL (the port: ../port/invites.ts; MongoDB: ../mongo/invites.ts). */
import type { InviteId } from "../../domain/ids";
import { inviteNotPendingForStatement } from "../../domain/orgs/refusals";
import { decideInviteStatement, storedStatement } from "../../domain/store-checks";
import type { SignedStatement } from "../../domain/types";
import type { Invite } from "../../domain/orgs/invites";
import type { ArgsOf, InviteStore, RevokeOutcome } from "../port";
import type { SqlContext } from "./context";
import type { InvitesTable } from "./schema";
import { writeOutbox } from "./outbox";

export function toInvite(r: InvitesTable): Invite {
  return {
    inviteId: r.invite_id,
    orgId: r.org_id,
    email: r.email,
    role: r.role,
    inviterId: r.inviter_id,
    status: r.status,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    ...(r.statement === null ? {} : { statement: JSON.parse(r.statement) as SignedStatement }),
  };
}

export class SqlInvites implements InviteStore {
  constructor(private readonly c: SqlContext) {}

  async createInvite({ invite, tokenHash, events }: ArgsOf<InviteStore["createInvite"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      await this.c.assertEmailFree(trx, invite.email);
      await trx
        .insertInto("invites")
        .values({
          invite_id: invite.inviteId,
          org_id: invite.orgId,
          email: invite.email,
          role: invite.role,
          inviter_id: invite.inviterId,
          token_hash: tokenHash,
          status: invite.status,
          expires_at: invite.expiresAt,
          created_at: invite.createdAt,
          updated_at: invite.createdAt,
          statement: null,
        })
        .execute();
    });
  }

  async listPendingInvites({ orgId, now }: ArgsOf<InviteStore["listPendingInvites"]>): Promise<Invite[]> {
    const rows = await this.c.db
      .selectFrom("invites")
      .selectAll()
      .where("org_id", "=", orgId)
      .where("status", "=", "pending")
      .where("expires_at", ">", now)
      .orderBy("created_at", "desc")
      .orderBy("invite_id", "desc")
      .execute();
    return rows.map(toInvite);
  }

  async findInviteByTokenHash(tokenHash: string): Promise<Invite | null> {
    const row = await this.c.db.selectFrom("invites").selectAll().where("token_hash", "=", tokenHash).executeTakeFirst();
    return row ? toInvite(row) : null;
  }

  async getInvite(inviteId: InviteId): Promise<Invite | null> {
    const row = await this.c.db.selectFrom("invites").selectAll().where("invite_id", "=", inviteId).executeTakeFirst();
    return row ? toInvite(row) : null;
  }

  async revokeInvite({ inviteId, orgId, now, events }: ArgsOf<InviteStore["revokeInvite"]>): Promise<RevokeOutcome> {
    return this.c.tx(async (trx) => {
      const row = await trx
        .selectFrom("invites")
        .select("status")
        .where("invite_id", "=", inviteId)
        .where("org_id", "=", orgId)
        .executeTakeFirst();
      if (!row) return "not-found";
      // Conditional: of concurrent revokes, exactly one sees the change.
      const res = await trx
        .updateTable("invites")
        .set({ status: "revoked", updated_at: now })
        .where("invite_id", "=", inviteId)
        .where("status", "=", "pending")
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return "not-pending";
      await writeOutbox(trx, events);
      return "revoked";
    });
  }

  async attachStatement({ inviteId, statement, now }: ArgsOf<InviteStore["attachStatement"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      const row = await trx.selectFrom("invites").select(["status", "statement"]).where("invite_id", "=", inviteId).executeTakeFirst();
      const stored = row?.statement ? (JSON.parse(row.statement) as SignedStatement) : null;
      if (decideInviteStatement(stored, statement) === "same") return;
      const text = JSON.stringify(storedStatement(statement));
      // Conditional: only a pending invite without a statement takes one.
      const res = await trx
        .updateTable("invites")
        .set({ statement: text, updated_at: now })
        .where("invite_id", "=", inviteId)
        .where("status", "=", "pending")
        .where("statement", "is", null)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw inviteNotPendingForStatement();
    });
  }
}
