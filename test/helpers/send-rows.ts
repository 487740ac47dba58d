/**
 * What the store holds of a send, read from the database a test server runs on through the
 * server's own connection (the embedded store holds its file exclusively): to show that a deleted,
 * expired or used-up send's bytes are gone, not only refused.
 */
import { sql, type Kysely } from "kysely";
import type { Database } from "../../lib/store/sql/schema";
import type { TestServer } from "./server";

export interface SendRows {
  sends: number;
  parts: number;
  partBytes: number;
}

export async function sendRows(server: TestServer, sendId: string): Promise<SendRows> {
  const { db } = (server.node.runtime.store.sends as unknown as { c: { db: Kysely<Database> } }).c;
  const r = await sql<Record<string, unknown>>`SELECT
      (SELECT count(*) FROM sends WHERE send_id = ${sendId}) AS sends,
      (SELECT count(*) FROM send_parts WHERE send_id = ${sendId}) AS parts,
      (SELECT coalesce(sum(length(data)), 0) FROM send_parts WHERE send_id = ${sendId}) AS part_bytes`.execute(db);
  const row = r.rows[0]!;
  return { sends: Number(row.sends), parts: Number(row.parts), partBytes: Number(row.part_bytes) };
}
