/**
 * Migration 024 (sign-in passkeys) on each SQL engine: a store of the version before opens with the
 * current one, its accounts keep their logins and may register a passkey that unlocks; and back
 * down, the table goes and the accounts stay.
 */
import { sql } from "kysely";
import { Migrator } from "kysely/migration";
import { newId, type OrgId, type UserId } from "../../lib/domain/ids";
import { openSqlStore } from "../../lib/store/sql/store";
import { migrationProvider } from "../../lib/store/sql/migrations";
import { MIGRATION_ENGINES, migratedTo } from "../helpers/migration-engines";
import { newUserKeys, registrationBundle } from "../helpers/crypto";

test.each(MIGRATION_ENGINES)(
  "%s: an account of the version before registers a passkey after the upgrade; the downgrade drops only the passkeys",
  async (_name, make) => {
    const engine = await make();
    try {
      await migratedTo(engine, "023_remembered_devices");
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
      await migratedTo(engine, "023_remembered_devices");

      const store = await openSqlStore(engine.open(), engine.ops);
      try {
        expect((await store.accounts.findUserById(userId))?.email).toBe("old@example.test");
        const login = {
          credentialId: "Y3JlZGVudGlhbA",
          userId,
          name: "Laptop",
          publicKey: "cHVibGljLWtleQ",
          counter: 0,
          createdAt: now,
          unlock: { prfWrappedKey: "cHJm", wrappedStretchedKey: "c3RyZXRjaGVk", keptWrappedKey: "a2VwdA==" },
        };
        await store.security.addPasskeyLogin({ login, unlockVersion: 1 });
        expect(await store.security.findPasskeyLogin(login.credentialId)).toEqual(login);
      } finally {
        await store.close();
      }
      const down = engine.open();
      try {
        expect((await new Migrator({ db: down, provider: migrationProvider }).migrateTo("023_remembered_devices")).error).toBeUndefined();
        const users = await sql<{ email: string }>`SELECT email FROM users`.execute(down);
        expect(users.rows.map((r) => r.email)).toEqual(["old@example.test"]);
        await expect(sql`SELECT 1 FROM passkey_logins`.execute(down)).rejects.toThrow();
      } finally {
        await down.destroy();
      }
    } finally {
      await engine.drop();
    }
  },
  60_000,
);
