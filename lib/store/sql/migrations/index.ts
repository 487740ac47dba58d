import type { Migration, MigrationProvider } from "kysely/migration";
import * as m001 from "./001_initial";
import * as m002 from "./002_audit";
import * as m003 from "./003_items_per_vault";
import * as m004 from "./004_vault_roster";
import * as m005 from "./005_statements";
import * as m006 from "./006_outbox";
import * as m007 from "./007_item_log";
import * as m008 from "./008_server_keys";
import * as m009 from "./009_sessions";
import * as m010 from "./010_account_version";
import * as m011 from "./011_backfill_sessions";
import * as m012 from "./012_removed_from_org";
import * as m013 from "./013_key_log";
import * as m014 from "./014_history_trash";
import * as m015 from "./015_second_factors_recovery";
import * as m016 from "./016_item_changes";
import * as m017 from "./017_vault_sizes";
import * as m018 from "./018_org_log";
import * as m019 from "./019_recovery_versions";
import * as m021 from "./021_recovery_decoys";
import * as m022 from "./022_session_scope";
import * as m023 from "./023_remembered_devices";
import * as m024 from "./024_passkey_logins";
import * as m025 from "./025_attachments";
import * as m026 from "./026_sends";
import * as m027 from "./027_emergency_access";

/** Versioned migrations, applied in name order at start. Add new ones here; never edit a shipped one. */
const MIGRATIONS: Record<string, Migration> = {
  "001_initial": m001,
  "002_audit": m002,
  "003_items_per_vault": m003,
  "004_vault_roster": m004,
  "005_statements": m005,
  "006_outbox": m006,
  "007_item_log": m007,
  "008_server_keys": m008,
  "009_sessions": m009,
  "010_account_version": m010,
  "011_backfill_sessions": m011,
  "012_removed_from_org": m012,
  "013_key_log": m013,
  "014_history_trash": m014,
  "015_second_factors_recovery": m015,
  "016_item_changes": m016,
  "017_vault_sizes": m017,
  "018_org_log": m018,
  "019_recovery_versions": m019,
  "021_recovery_decoys": m021,
  "022_session_scope": m022,
  "023_remembered_devices": m023,
  "024_passkey_logins": m024,
  "025_attachments": m025,
  "026_sends": m026,
  "027_emergency_access": m027,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
