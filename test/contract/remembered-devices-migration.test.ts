/**
 * Migration 023 (remembered devices) on each SQL engine: a store of the version before opens with
 * the current one, its accounts keep their logins and may remember devices; and back down, the
 * table goes and the accounts stay.
 */
import { sql } from "kysely";
import { Migrator } from "kysely/migration";
import { newId, type OrgId, type UserId } from "../../lib/domain/ids";
import { openSqlStore } from "../../lib/store/sql/store";
import { migrationProvider } from "../../lib/store/sql/migrations";
import { MIGRATION_ENGINES, migratedTo } from "../helpers/migration-engines";
import { newUserKeys, registrationBundle } from "../helpers/crypto";

test.each(MIGRATION_ENGINES)(
  "%s: an account of the version before remembers a device after the upgrade; the downgrade drops only the devices",
  async (_name, make) => {
    const engine = await make();
    try {
      await migratedTo(engine, "022_session_scope");
      // An account and its login, as the version before stores them (through the store, then the schema taken back to 022).
      const older = await openSqlStore(engine.open(), engine.ops);
      const now = new Date().toISOString();
      const user = {
        ...registrationBundle(await newUserKeys()),
        userId: newId<UserId>(),
        email: "old@example.test",
        authHash: "h",
        createdAt: now,
      };
      const { userId } = await older.accounts.registerOwnerOfNewOrg({
        user,
        org: { orgId: newId<OrgId>(), name: "o", createdAt: now },
        onlyIfFirstUser: false,
      });
      await older.close();
      await migratedTo(engine, "022_session_scope");

      const store = await openSqlStore(engine.open(), engine.ops);
      try {
        expect((await store.accounts.findUserById(userId))?.email).toBe("old@example.test");
        const device = {
          deviceId: newId(),
          userId,
          deviceName: "laptop",
          createdAt: now,
          lastUsedAt: now,
          expiresAt: "2099-01-01T00:00:00.000Z",
        };
        await store.sessions.rememberDevice({ device, tokenHash: "hash", max: 20 });
        expect(await store.sessions.findRememberedDevice("hash")).toEqual(device);
      } finally {
        await store.close();
      }
      const down = engine.open();
      try {
        expect((await new Migrator({ db: down, provider: migrationProvider }).migrateTo("022_session_scope")).error).toBeUndefined();
        const users = await sql<{ email: string }>`SELECT email FROM users`.execute(down);
        expect(users.rows.map((r) => r.email)).toEqual(["old@example.test"]);
        await expect(sql`SELECT 1 FROM remembered_devices`.execute(down)).rejects.toThrow();
      } finally {
        await down.destroy();
      }
    } finally {
      await engine.drop();
    }
  },
  60_000,
);
