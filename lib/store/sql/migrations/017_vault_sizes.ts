import { PostgresAdapter, sql, type Kysely } from "../kysely";

// What each vault stores, kept current by triggers: an item write read the vault's size
// as sums over all its items, trash and history, a scan of the whole vault on every write. Now
// `vaults` holds the counts and bytes (firm: items and trash; history: kept revisions), and each
// insert, update or delete of a row of `items`, `item_trash` or `item_revisions` moves them in the
// same transaction (every such write holds the vault's row lock already). Bytes as the limits
// count them: octet lengths of the two ciphertexts.
const COUNTERS = ["firm_items", "firm_bytes", "history_items", "history_bytes"] as const;
const TABLES = [
  ["items", "firm"],
  ["item_trash", "firm"],
  ["item_revisions", "history"],
] as const;
const OPS = ["insert", "update", "delete"] as const;
const BYTES = (row: "NEW" | "OLD") => `octet_length(${row}.encrypted_data) + octet_length(${row}.encrypted_name)`;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COUNTERS)
    await db.schema
      .alterTable("vaults")
      .addColumn(column, "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
  const size = (table: string, what: "count" | "bytes") =>
    what === "count"
      ? `(SELECT count(*) FROM ${table} t WHERE t.vault_id = vaults.vault_id)`
      : `(SELECT coalesce(sum(octet_length(t.encrypted_data) + octet_length(t.encrypted_name)), 0) FROM ${table} t WHERE t.vault_id = vaults.vault_id)`;
  await sql
    .raw(
      `UPDATE vaults SET firm_items = ${size("items", "count")} + ${size("item_trash", "count")},
        firm_bytes = ${size("items", "bytes")} + ${size("item_trash", "bytes")},
        history_items = ${size("item_revisions", "count")}, history_bytes = ${size("item_revisions", "bytes")}`,
    )
    .execute(db);
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const change = (kind: "firm" | "history", row: "NEW" | "OLD", sign: "+" | "-") =>
    `UPDATE vaults SET ${kind}_items = ${kind}_items ${sign} 1, ${kind}_bytes = ${kind}_bytes ${sign} (${BYTES(row)}) WHERE vault_id = ${row}.vault_id;`;
  if (postgres) {
    // Statement triggers over the rows the statement changed (transition tables): one update of
    // the vault row per statement, however many rows it wrote (a row trigger would update the same
    // row once per item of a rekey or an import, each a new row version in one transaction).
    const rows = (table: "new_rows" | "old_rows", sign: "" | "-") =>
      `SELECT vault_id, ${sign}1 AS n, ${sign}(octet_length(encrypted_data) + octet_length(encrypted_name)) AS b FROM ${table}`;
    for (const kind of ["firm", "history"] as const)
      for (const op of OPS) {
        const sources = [...(op !== "delete" ? [rows("new_rows", "")] : []), ...(op !== "insert" ? [rows("old_rows", "-")] : [])];
        await sql
          .raw(
            `CREATE FUNCTION vault_${kind}_size_${op}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              UPDATE vaults v SET ${kind}_items = v.${kind}_items + d.n, ${kind}_bytes = v.${kind}_bytes + d.b
              FROM (SELECT vault_id, sum(n) AS n, sum(b) AS b FROM (${sources.join(" UNION ALL ")}) x GROUP BY vault_id) d
              WHERE v.vault_id = d.vault_id;
              RETURN NULL;
            END $$`,
          )
          .execute(db);
      }
    for (const [table, kind] of TABLES)
      for (const op of OPS) {
        const referencing = {
          insert: "NEW TABLE AS new_rows",
          update: "OLD TABLE AS old_rows NEW TABLE AS new_rows",
          delete: "OLD TABLE AS old_rows",
        }[op];
        await sql
          .raw(
            `CREATE TRIGGER ${table}_size_${op} AFTER ${op.toUpperCase()} ON ${table} REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION vault_${kind}_size_${op}()`,
          )
          .execute(db);
      }
    return;
  }
  // SQLite updates a row in place: a row trigger is cheap there (and SQLite has no other kind).
  // An update that leaves the row in its vault with as many bytes (a rekey's, whose ciphertexts
  // keep their lengths) changes no size, and runs nothing.
  const unchanged = `OLD.vault_id = NEW.vault_id AND ${BYTES("OLD")} = ${BYTES("NEW")}`;
  for (const [table, kind] of TABLES) {
    await sql.raw(`CREATE TRIGGER ${table}_size_insert AFTER INSERT ON ${table} BEGIN ${change(kind, "NEW", "+")} END`).execute(db);
    await sql.raw(`CREATE TRIGGER ${table}_size_delete AFTER DELETE ON ${table} BEGIN ${change(kind, "OLD", "-")} END`).execute(db);
    await sql
      .raw(
        `CREATE TRIGGER ${table}_size_update AFTER UPDATE ON ${table} WHEN NOT (${unchanged}) BEGIN ${change(kind, "OLD", "-")} ${change(kind, "NEW", "+")} END`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const [table] of TABLES)
    for (const op of OPS)
      await sql.raw(postgres ? `DROP TRIGGER ${table}_size_${op} ON ${table}` : `DROP TRIGGER ${table}_size_${op}`).execute(db);
  if (postgres)
    for (const kind of ["firm", "history"]) for (const op of OPS) await sql.raw(`DROP FUNCTION vault_${kind}_size_${op}()`).execute(db);
  for (const column of COUNTERS) await db.schema.alterTable("vaults").dropColumn(column).execute();
}
