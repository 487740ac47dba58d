/** Housekeeping on SQL (the port: ../port/housekeeping.ts; MongoDB: ../mongo/housekeeping.ts). */
import { sql } from "./kysely";
import { PURGEABLE_INVITE_STATUSES } from "../../domain/orgs/invites";
import type { ArgsOf, Housekeeping, PoolUsage, PurgeCounts } from "../port";
import type { SqlContext } from "./context";
import { purgeStaleUploads, txDroppingAttachments } from "./attachments";
import { fillBackupChunks } from "./attachment-files";

/** Rows a purge deletes per statement: short transactions, whatever the backlog. */
const PURGE_BATCH = 1_000;

export class SqlHousekeeping implements Housekeeping {
  constructor(private readonly c: SqlContext) {}

  async purgeExpired(args: ArgsOf<Housekeeping["purgeExpired"]>): Promise<PurgeCounts> {
    const { now, invitesExpiredBefore, trashDeletedBefore, uploadsStartedBefore } = args;
    const db = this.c.db;
    const invites = await purgeInBatches(() =>
      db
        .deleteFrom("invites")
        .where(
          "invite_id",
          "in",
          db
            .selectFrom("invites")
            .select("invite_id")
            .where("expires_at", "<=", invitesExpiredBefore)
            .where("status", "in", [...PURGEABLE_INVITE_STATUSES])
            .limit(PURGE_BATCH),
        )
        .executeTakeFirst(),
    );
    const refreshTokens = await purgeInBatches(() =>
      db
        .deleteFrom("refresh_tokens")
        .where(
          "token_hash",
          "in",
          db
            .selectFrom("refresh_tokens")
            .select("token_hash")
            .where((eb) => eb.or([eb("status", "=", "revoked"), eb("expires_at", "<=", now)]))
            .limit(PURGE_BATCH),
        )
        .executeTakeFirst(),
    );
    const sessions = await purgeInBatches(() =>
      db
        .deleteFrom("sessions")
        .where(
          "session_id",
          "in",
          db
            .selectFrom("sessions")
            .select("session_id")
            // An ended session stays until it would have expired: its device, back later, is told why it ended.
            .where("expires_at", "<=", now)
            .limit(PURGE_BATCH),
        )
        .executeTakeFirst(),
    );
    const rememberedDevices = await purgeInBatches(() =>
      db
        .deleteFrom("remembered_devices")
        .where("device_id", "in", db.selectFrom("remembered_devices").select("device_id").where("expires_at", "<=", now).limit(PURGE_BATCH))
        .executeTakeFirst(),
    );
    const trash = trashDeletedBefore ? await this.purgeTrash(trashDeletedBefore) : 0;
    const uploads = uploadsStartedBefore ? await purgeStaleUploads(this.c, uploadsStartedBefore) : 0;
    return { invites, refreshTokens, sessions, trash, rememberedDevices, uploads };
  }

  /** Items deleted into a trash before `before`, with their history and attachments: vault by vault, each under its lock (as a rekey or restore takes it). */
  private async purgeTrash(before: string): Promise<number> {
    let total = 0;
    for (;;) {
      const vaults = await this.c.db
        .selectFrom("item_trash")
        .select("vault_id")
        .distinct()
        .where("deleted_at", "<=", before)
        .limit(PURGE_BATCH)
        .execute();
      for (const { vault_id: vaultId } of vaults)
        total += await txDroppingAttachments(this.c, async (trx, dropAttachments) => {
          await this.c.engine.lockVault(trx, vaultId, "update");
          const expired = trx.selectFrom("item_trash").select("item_id").where("vault_id", "=", vaultId).where("deleted_at", "<=", before);
          await trx.deleteFrom("item_revisions").where("vault_id", "=", vaultId).where("item_id", "in", expired).execute();
          const res = await trx
            .deleteFrom("item_trash")
            .where("vault_id", "=", vaultId)
            .where("deleted_at", "<=", before)
            .executeTakeFirst();
          await dropAttachments(vaultId);
          return Number(res.numDeletedRows);
        });
      if (vaults.length < PURGE_BATCH) return total;
    }
  }

  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.c.db);
  }

  poolUsage(): PoolUsage | undefined {
    return this.c.engine.poolUsage(this.c.db);
  }

  /** The database's copy, then, where chunks are files, their bytes written into its chunk rows (attachment-files.ts). */
  async backupTo(file: string): Promise<void> {
    await this.c.engine.backupTo(this.c.db, file);
    if (this.c.chunks) await fillBackupChunks(file, this.c.chunks);
  }
}

/** Deletes batch after batch until one comes back short. */
async function purgeInBatches(batch: () => Promise<{ numDeletedRows: bigint }>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = Number((await batch()).numDeletedRows);
    total += n;
    if (n < PURGE_BATCH) return total;
  }
}
