/**
 * The store port on SQL: one query layer (Kysely) over two engines, SQLite (embedded, sqlite.ts)
 * and PostgreSQL (postgres.ts). One file per aggregate, read beside its MongoDB counterpart.
 */
import type { Kysely } from "kysely";
import { Migrator } from "./kysely";
import type { Store } from "../port";
import { SqlAccounts } from "./accounts";
import { SqlAttachments } from "./attachments";
import { ChunkFiles } from "./attachment-files";
import { SqlAudit } from "./audit";
import { SqlContext, type EngineOps } from "./context";
import { SqlHousekeeping } from "./housekeeping";
import { SqlInvites } from "./invites";
import { SqlItems } from "./items";
import { SqlOutbox } from "./outbox";
import { SqlSecurity } from "./security";
import { SqlSends } from "./sends";
import { SqlEmergency } from "./emergency";
import { SqlOrgLog } from "./org-log";
import { SqlSessions } from "./sessions";
import { migrationProvider } from "./migrations";
import type { Database } from "./schema";
import { SqlVaults } from "./vaults";

export interface SqlStoreOptions {
  /** Attachment chunks as files in this folder (the embedded store: DATA_DIR/attachments); without it, in their rows. */
  chunkDir?: string;
}

/** Applies pending migrations (under the engine's lock), then serves. */
export async function openSqlStore(db: Kysely<Database>, engine: EngineOps, opts: SqlStoreOptions = {}): Promise<Store> {
  const { error } = await engine.whileMigrating(db, () => new Migrator({ db, provider: migrationProvider }).migrateToLatest());
  if (error) throw error;
  const c = new SqlContext(db, engine, opts.chunkDir === undefined ? undefined : new ChunkFiles(opts.chunkDir));
  const vaults = new SqlVaults(c);
  return {
    accounts: new SqlAccounts(c),
    sessions: new SqlSessions(c),
    vaults,
    items: new SqlItems(c, vaults),
    attachments: new SqlAttachments(c, vaults),
    sends: new SqlSends(c),
    emergency: new SqlEmergency(c),
    invites: new SqlInvites(c),
    orgLog: new SqlOrgLog(c),
    audit: new SqlAudit(c),
    outbox: new SqlOutbox(c),
    housekeeping: new SqlHousekeeping(c),
    security: new SqlSecurity(c),
    close: () => db.destroy(),
  };
}
