/** Housekeeping on MongoDB (the port: ../port/housekeeping.ts; SQL: ../sql/housekeeping.ts). */
import type { VaultId } from "../../domain/ids";
import { PURGEABLE_INVITE_STATUSES } from "../../domain/orgs/invites";
import type { ArgsOf, Housekeeping, PurgeCounts } from "../port";
import type { MongoContext } from "./context";
import { deleteFromTrash } from "./item-history";
import { purgeStaleUploads, txDroppingAttachments } from "./attachments";

/** Vaults whose trash a purge round takes: short transactions, one per vault, whatever the backlog. */
const PURGE_BATCH = 1_000;

export class MongoHousekeeping implements Housekeeping {
  constructor(private readonly c: MongoContext) {}

  async purgeExpired(args: ArgsOf<Housekeeping["purgeExpired"]>): Promise<PurgeCounts> {
    const { now, invitesExpiredBefore, trashDeletedBefore, uploadsStartedBefore } = args;
    const invites = await this.c.invites.deleteMany({
      expiresAt: { $lte: invitesExpiredBefore },
      status: { $in: [...PURGEABLE_INVITE_STATUSES] },
    });
    const tokens = await this.c.refreshTokens.deleteMany({ $or: [{ status: "revoked" }, { expiresAt: { $lte: now } }] });
    // An ended session stays until it would have expired: its device, back later, is told why it ended.
    const sessions = await this.c.sessions.deleteMany({ expiresAt: { $lte: now } });
    const devices = await this.c.rememberedDevices.deleteMany({ expiresAt: { $lte: now } });
    const trash = trashDeletedBefore ? await this.purgeTrash(trashDeletedBefore) : 0;
    const uploads = uploadsStartedBefore ? await purgeStaleUploads(this.c, uploadsStartedBefore) : 0;
    return {
      invites: invites.deletedCount,
      refreshTokens: tokens.deletedCount,
      sessions: sessions.deletedCount,
      trash,
      rememberedDevices: devices.deletedCount,
      uploads,
    };
  }

  /** Items deleted into a trash before `before`, with their history and attachments: vault by vault, each under its lock (as a rekey or restore takes it). */
  private async purgeTrash(before: string): Promise<number> {
    let total = 0;
    for (;;) {
      const vaults = await this.c.itemTrash
        .aggregate<{ _id: VaultId }>([
          { $match: { deletedAt: { $lte: before } } },
          { $group: { _id: "$vaultId" } },
          { $limit: PURGE_BATCH },
        ])
        .toArray();
      for (const { _id: vaultId } of vaults)
        total += await txDroppingAttachments(this.c, async (session, dropAttachments) => {
          await this.c.lockVault(session, vaultId);
          const expired = await this.c.itemTrash
            .find({ vaultId, deletedAt: { $lte: before } }, { session, projection: { itemId: 1 } })
            .toArray();
          const purged = await deleteFromTrash(
            this.c,
            session,
            vaultId,
            expired.map((t) => t.itemId),
          );
          await dropAttachments(vaultId);
          return purged;
        });
      if (vaults.length < PURGE_BATCH) return total;
    }
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
