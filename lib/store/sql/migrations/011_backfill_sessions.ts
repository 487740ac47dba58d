import { sql, type Kysely } from "../kysely";

// Every login an earlier release made (a refresh-token family with an active token) becomes a
// session, so that listing, ending all others and a password change reach it too. Its start is
// its first token's, its last use its newest token's, its address unknown.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    INSERT INTO sessions (session_id, user_id, device_name, created_at, last_used_at, address, expires_at, ended_at)
    SELECT family_id, user_id, 'signed in before sessions were recorded', MIN(created_at), MAX(created_at), 'unknown', MAX(expires_at), NULL
    FROM refresh_tokens
    WHERE status = 'active' AND family_id NOT IN (SELECT session_id FROM sessions)
    GROUP BY family_id, user_id`.execute(db);
}

export async function down(): Promise<void> {
  // Nothing to undo: the sessions table goes with 009.
}
