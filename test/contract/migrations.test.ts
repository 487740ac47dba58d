/**
 * A store created by an older version opens with the current one: the migrations that change
 * tables keep every row. Run on each SQL engine.
 */
import { newId, type ItemId, type OrgId, type UserId, type VaultId } from "../../lib/domain/ids";
import fs from "node:fs";
import { sql, type Kysely } from "kysely";
import { Migrator } from "kysely/migration";
import { openSqlStore } from "../../lib/store/sql/store";
import { migrationProvider } from "../../lib/store/sql/migrations";
import { openSqlite, sqliteOps } from "../../lib/store/sql/sqlite";
import type { Database } from "../../lib/store/sql/schema";
import { tempDir } from "../helpers/server";
import { MIGRATION_ENGINES, migratedTo } from "../helpers/migration-engines";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared } from "../helpers/crypto";

/** The names of the migrations the store records as applied, in order. */
async function applied(db: Kysely<Database>): Promise<string[]> {
  return (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db)).rows.map((r) => r.name);
}

test.each(MIGRATION_ENGINES)(
  "%s: items written before item ids were scoped to their vault are all there after the upgrade, ids may then repeat across vaults, and the downgrade keeps one per id",
  async (_name, make) => {
    const engine = await make();
    try {
      // The schema of the version before: migrations up to 002, and a vault with two items.
      await migratedTo(engine, "002_audit");

      const keys = await newUserKeys();
      const bundle = registrationBundle(keys);
      const now = new Date().toISOString();
      const wrapped = wrapShared(Buffer.alloc(32, 1), bundle.publicKey);
      const wrap = { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys.edPrivate)) };
      const userId = newId<UserId>(),
        orgId = newId<OrgId>(),
        vaultId = newId<VaultId>();
      const itemIds = [newId<ItemId>(), newId<ItemId>()];
      const db = engine.open();
      await sql`INSERT INTO orgs (org_id, name, created_at) VALUES (${orgId}, 'o', ${now})`.execute(db);
      await sql`INSERT INTO users (user_id, org_id, org_role, email, auth_hash, kdf, public_key, signing_public_key, public_key_signature,
      encrypted_private_key, encrypted_signing_private_key, created_at)
      VALUES (${userId}, ${orgId}, 'owner', 'o@example.test', 'h', ${JSON.stringify(bundle.kdf)}, ${bundle.publicKey}, ${bundle.signingPublicKey},
      ${bundle.publicKeySignature}, ${bundle.encryptedPrivateKey}, ${bundle.encryptedSigningPrivateKey}, ${now})`.execute(db);
      await sql`INSERT INTO vaults (vault_id, org_id, name, type, key_version, rekey_required, created_at, updated_at)
      VALUES (${vaultId}, ${orgId}, 'v', 'shared', 1, 0, ${now}, ${now})`.execute(db);
      await sql`INSERT INTO vault_members (vault_id, user_id, role, encrypted_vault_key, sender_id, wrap_signature, created_at, updated_at)
      VALUES (${vaultId}, ${userId}, 'owner', ${wrap.encryptedVaultKey}, ${userId}, ${wrap.wrapSignature}, ${now}, ${now})`.execute(db);
      for (const [n, itemId] of itemIds.entries()) {
        await sql`INSERT INTO items (item_id, vault_id, encrypted_data, encrypted_name, revision, key_version, created_at, updated_at)
        VALUES (${itemId}, ${vaultId}, ${b64(Buffer.from(`data${n}`))}, 'bmFtZQ==', 3, 1, ${now}, ${now})`.execute(db);
      }
      await db.destroy();

      // The current version opens it: every item is there, unchanged, and an id may repeat in another vault.
      const store = await openSqlStore(engine.open(), engine.ops);
      try {
        const items = await store.items.listItems({ vaultId, actorId: userId });
        expect(items!.map((i) => [i.itemId, i.encryptedData, i.revision])).toEqual(
          itemIds.map((id, n) => [id, b64(Buffer.from(`data${n}`)), 3]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
        );
        const other = await store.vaults.createVault({
          vault: { vaultId: newId<VaultId>(), orgId, name: "w", type: "shared", ownerId: userId, ...wrap },
          now,
        });
        await expect(
          store.items.createItem({
            vaultId: other.vaultId,
            actorId: userId,
            itemId: itemIds[0]!,
            write: { encryptedData: "AAAA", encryptedName: "AAAA" },
            limits: { maxBytes: 1 << 30, maxItems: 1_000_000 },
            now,
          }),
        ).resolves.toMatchObject({ itemId: itemIds[0] });
        await expect(
          store.items.createItem({
            vaultId,
            actorId: userId,
            itemId: itemIds[0]!,
            write: { encryptedData: "AAAA", encryptedName: "AAAA" },
            limits: { maxBytes: 1 << 30, maxItems: 1_000_000 },
            now,
          }),
        ).rejects.toMatchObject({ type: "CONFLICT" });
      } finally {
        await store.close();
      }
      // And back down: one row per id again (of an id in two vaults, one is kept), nothing else lost.
      const back = engine.open();
      try {
        expect((await new Migrator({ db: back, provider: migrationProvider }).migrateTo("002_audit")).error).toBeUndefined();
        const rows = await sql<{ item_id: string }>`SELECT item_id FROM items`.execute(back);
        expect(rows.rows.map((r) => r.item_id).sort()).toEqual([...itemIds].sort());
      } finally {
        await back.destroy();
      }
    } finally {
      await engine.drop();
    }
  },
  60_000,
);

test.each(MIGRATION_ENGINES)(
  "%s: an upgrade that fails part-way leaves the store as the older version left it, and the next start completes it",
  async (_name, make) => {
    const engine = await make();
    try {
      await migratedTo(engine, "002_audit");

      // The next version's migrations, one of them failing after its own work (a crash, a full
      // disk): 003 to 008 ran before it, and 003 rebuilt the items table.
      const all = await migrationProvider.getMigrations();
      const failing = {
        getMigrations: async () => ({
          ...all,
          "009_sessions": {
            up: async (db: Kysely<unknown>) => {
              await all["009_sessions"]!.up(db);
              throw new Error("the disk is full");
            },
          },
        }),
      };
      const db = engine.open();
      try {
        const { error } = await new Migrator({ db, provider: failing }).migrateToLatest();
        expect(String(error)).toContain("the disk is full");
        // Nothing of 003 to 009 stayed: the schema is 002's, and it says so.
        expect(await applied(db)).toEqual(["001_initial", "002_audit"]);
        const tables = (await db.introspection.getTables()).map((t) => t.name);
        expect(tables).toEqual(expect.arrayContaining(["items", "vaults", "users"]));
        for (const later of ["roster_links", "outbox", "item_links", "server_keys", "sessions", "items_rebuilt"])
          expect(tables).not.toContain(later);
      } finally {
        await db.destroy();
      }

      // The real next start migrates it whole.
      const store = await openSqlStore(engine.open(), engine.ops);
      await store.close();
      const after = engine.open();
      try {
        expect(await applied(after)).toEqual(Object.keys(all).sort());
      } finally {
        await after.destroy();
      }
    } finally {
      await engine.drop();
    }
  },
  60_000,
);

test("SQLite: a migration whose commit fails fails the start, and leaves the schema as it was", async () => {
  const dir = tempDir("vault-migrate-commit-");
  const db = openSqlite(dir);
  try {
    // A deferred foreign key is checked at COMMIT: the migration runs, its transaction's commit fails.
    const provider = {
      getMigrations: async () => ({
        "001_dangling": {
          up: async (trx: Kysely<unknown>) => {
            await sql`CREATE TABLE parents (id TEXT PRIMARY KEY)`.execute(trx);
            await sql`CREATE TABLE children (parent TEXT REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`.execute(trx);
            await sql`INSERT INTO children (parent) VALUES ('none')`.execute(trx);
          },
        },
      }),
    };
    await expect(sqliteOps.whileMigrating(db, () => new Migrator({ db, provider }).migrateToLatest())).rejects.toThrow(/FOREIGN KEY/);
    const tables = (await db.introspection.getTables()).map((t) => t.name);
    expect(tables).not.toContain("parents");
    expect(tables).not.toContain("children");
  } finally {
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.each(MIGRATION_ENGINES)(
  "%s: recovery requests and their approvals made before decoys were stored survive the upgrade, and the downgrade keeps them and drops decoys",
  async (_name, make) => {
    const engine = await make();
    try {
      await migratedTo(engine, "019_recovery_versions");
      const bundle = registrationBundle(await newUserKeys());
      const now = new Date().toISOString();
      const later = new Date(Date.now() + 86_400_000).toISOString();
      const [userId, trusteeId] = [newId<UserId>(), newId<UserId>()];
      const orgId = newId<OrgId>();
      const [enrolmentId, requestId] = [newId(), newId()];
      const db = engine.open();
      await sql`INSERT INTO orgs (org_id, name, created_at) VALUES (${orgId}, 'o', ${now})`.execute(db);
      for (const [id, email] of [
        [userId, "u@example.test"],
        [trusteeId, "t@example.test"],
      ])
        await sql`INSERT INTO users (user_id, org_id, org_role, email, auth_hash, kdf, public_key, signing_public_key, public_key_signature,
        encrypted_private_key, encrypted_signing_private_key, created_at)
        VALUES (${id}, ${orgId}, 'admin', ${email}, 'h', ${JSON.stringify(bundle.kdf)}, ${bundle.publicKey}, ${bundle.signingPublicKey},
        ${bundle.publicKeySignature}, ${bundle.encryptedPrivateKey}, ${bundle.encryptedSigningPrivateKey}, ${now})`.execute(db);
      await sql`INSERT INTO recovery_enrolments (user_id, enrolment_id, org_id, threshold, copy, signature, kdf_salt, created_at)
        VALUES (${userId}, ${enrolmentId}, ${orgId}, 2, 'Y29weQ==', 'c2ln', 'salt', ${now})`.execute(db);
      await sql`INSERT INTO recovery_shares (enrolment_id, trustee_id, encrypted_share, trustee_keys)
        VALUES (${enrolmentId}, ${trusteeId}, 'c2hhcmU=', ${"ab".repeat(32)})`.execute(db);
      await sql`INSERT INTO recovery_requests (request_id, user_id, org_id, enrolment_id, public_key, token_hash, status, created_at, expires_at)
        VALUES (${requestId}, ${userId}, ${orgId}, ${enrolmentId}, 'cGs=', 'th', 'pending', ${now}, ${later})`.execute(db);
      await sql`INSERT INTO recovery_approvals (request_id, trustee_id, encrypted_share, signature, approved_at)
        VALUES (${requestId}, ${trusteeId}, 'cw==', 'c2ln', ${now})`.execute(db);
      await db.destroy();

      const store = await openSqlStore(engine.open(), engine.ops);
      const decoyId = newId();
      try {
        expect(await store.security.findRecoveryRequest(requestId)).toMatchObject({ requestId, userId, enrolmentId, status: "pending" });
        expect((await store.security.listRequestsForTrustee({ trusteeId, now })).map((r) => r.requestId)).toEqual([requestId]);
        expect((await store.security.listApprovals(requestId)).map((a) => a.trusteeId)).toEqual([trusteeId]);
        await store.security.startRecoveryRequest({
          request: {
            requestId: decoyId,
            addressKey: "a",
            clientKey: "c",
            bindingHash: null,
            account: null,
            publicKey: "cGs=",
            tokenHash: "th",
            createdAt: now,
            expiresAt: later,
          },
        });
        expect(await store.security.findRecoveryAsk(decoyId)).toMatchObject({ requestId: decoyId, request: null });
      } finally {
        await store.close();
      }
      // Back down: the account's request and its approval stay; the decoy, with no account to stand for, goes.
      const back = engine.open();
      try {
        expect((await new Migrator({ db: back, provider: migrationProvider }).migrateTo("019_recovery_versions")).error).toBeUndefined();
        const requests = await sql<{ request_id: string }>`SELECT request_id FROM recovery_requests`.execute(back);
        expect(requests.rows.map((r) => r.request_id)).toEqual([requestId]);
        const approvals = await sql<{ trustee_id: string }>`SELECT trustee_id FROM recovery_approvals`.execute(back);
        expect(approvals.rows.map((r) => r.trustee_id)).toEqual([trusteeId]);
      } finally {
        await back.destroy();
      }
    } finally {
      await engine.drop();
    }
  },
  60_000,
);
