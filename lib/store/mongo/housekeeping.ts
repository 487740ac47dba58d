/** Housekeeping on MongoDB (the port: ../port/housekeeping.ts; SQL: ../sql/housekeeping.ts). */
import { PURGEABLE_INVITE_STATUSES } from "../../domain/invites";
import type { ArgsOf, Housekeeping, PurgeCounts } from "../port";
import type { MongoContext } from "./context";

export class MongoHousekeeping implements Housekeeping {
  constructor(private readonly c: MongoContext) {}

  async purgeExpired({ now, invitesExpiredBefore }: ArgsOf<Housekeeping["purgeExpired"]>): Promise<PurgeCounts> {
    const invites = await this.c.invites.deleteMany({
      expiresAt: { $lte: invitesExpiredBefore },
      status: { $in: [...PURGEABLE_INVITE_STATUSES] },
    });
    const tokens = await this.c.refreshTokens.deleteMany({ $or: [{ status: "revoked" }, { expiresAt: { $lte: now } }] });
    const sessions = await this.c.sessions.deleteMany({ $or: [{ endedAt: { $exists: true } }, { expiresAt: { $lte: now } }] });
    return { invites: invites.deletedCount, refreshTokens: tokens.deletedCount, sessions: sessions.deletedCount };
  }

  async ping(): Promise<void> {
    await this.c.db.command({ ping: 1 });
  }

  /** The driver's pool has no public figures (it reports through CMAP events): none. */
  poolUsage(): undefined {
    return undefined;
  }

  async backupTo(): Promise<void> {
    throw new Error("A MongoDB store is backed up with mongodump and restored with mongorestore");
  }
}
