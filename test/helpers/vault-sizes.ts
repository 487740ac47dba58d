/**
 * The sizes each vault's row keeps (migration 017's triggers), against the sums over its rows:
 * the vaults where they differ. The SQL stores' contract suites end with none.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../lib/store/sql/schema";

const count = (table: string) => `(SELECT count(*) FROM ${table} t WHERE t.vault_id = v.vault_id)`;
const bytes = (table: string) =>
  `(SELECT coalesce(sum(octet_length(t.encrypted_data) + octet_length(t.encrypted_name)), 0) FROM ${table} t WHERE t.vault_id = v.vault_id)`;

export async function vaultSizeDrift(db: Kysely<Database>): Promise<unknown[]> {
  const { rows } = await sql
    .raw<Record<string, number | string>>(
      `SELECT v.vault_id, v.firm_items, v.firm_bytes, v.history_items, v.history_bytes,
        ${count("items")} + ${count("item_trash")} AS firm_items_now, ${bytes("items")} + ${bytes("item_trash")} AS firm_bytes_now,
        ${count("item_revisions")} AS history_items_now, ${bytes("item_revisions")} AS history_bytes_now
      FROM vaults v`,
    )
    .execute(db);
  const kept = ["firm_items", "firm_bytes", "history_items", "history_bytes"];
  return rows.filter((r) => kept.some((k) => Number(r[k]) !== Number(r[`${k}_now`])));
}
