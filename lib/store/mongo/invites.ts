/** Invites on MongoDB (the port: ../port/invites.ts; SQL: ../sql/invites.ts). */
import type { InviteId } from "../../domain/ids";
import { inviteNotPendingForStatement } from "../../domain/orgs/refusals";
import { decideInviteStatement, storedStatement } from "../../domain/store-checks";
import type { Invite } from "../../domain/orgs/invites";
import type { ArgsOf, InviteStore, RevokeOutcome } from "../port";
import type { MongoContext } from "./context";
import { inviteDoc, toInvite } from "./documents";
import { writeOutbox } from "./outbox";

export class MongoInvites implements InviteStore {
  constructor(private readonly c: MongoContext) {}

  async createInvite({ invite, tokenHash, events }: ArgsOf<InviteStore["createInvite"]>): Promise<void> {
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.c.assertEmailFree(session, invite.email);
      await this.c.invites.insertOne(inviteDoc(invite, tokenHash), { session });
    });
  }

  async listPendingInvites({ orgId, now }: ArgsOf<InviteStore["listPendingInvites"]>): Promise<Invite[]> {
    const docs = await this.c.invites
      .find({ orgId, status: "pending", expiresAt: { $gt: now } })
      .sort({ createdAt: -1, _id: -1 })
      .toArray();
    return docs.map(toInvite);
  }

  async findInviteByTokenHash(tokenHash: string): Promise<Invite | null> {
    const doc = await this.c.invites.findOne({ tokenHash });
    return doc ? toInvite(doc) : null;
  }

  async getInvite(inviteId: InviteId): Promise<Invite | null> {
    const doc = await this.c.invites.findOne({ _id: inviteId });
    return doc ? toInvite(doc) : null;
  }

  async revokeInvite({ inviteId, orgId, now, events }: ArgsOf<InviteStore["revokeInvite"]>): Promise<RevokeOutcome> {
    return this.c.tx(async (session): Promise<RevokeOutcome> => {
      const doc = await this.c.invites.findOne({ _id: inviteId, orgId }, { session, projection: { status: 1 } });
      if (!doc) return "not-found";
      const res = await this.c.invites.updateOne(
        { _id: inviteId, status: "pending" },
        { $set: { status: "revoked", updatedAt: now } },
        { session },
      );
      if (res.modifiedCount !== 1) return "not-pending";
      await writeOutbox(this.c, session, events);
      return "revoked";
    });
  }

  async attachStatement({ inviteId, statement, now }: ArgsOf<InviteStore["attachStatement"]>): Promise<void> {
    await this.c.tx(async (session) => {
      const doc = await this.c.invites.findOne({ _id: inviteId }, { session, projection: { statement: 1 } });
      if (decideInviteStatement(doc?.statement, statement) === "same") return;
      const next = storedStatement(statement);
      // Conditional: only a pending invite without a statement takes one.
      const res = await this.c.invites.updateOne(
        { _id: inviteId, status: "pending", statement: { $exists: false } },
        { $set: { statement: next, updatedAt: now } },
        { session },
      );
      if (res.modifiedCount !== 1) throw inviteNotPendingForStatement();
    });
  }
}
