/**
 * The store port on MongoDB (the official driver): one file per aggregate, each read beside its
 * SQL counterpart (`../sql/vaults.ts` beside `./vaults.ts`); what they share is in context.ts.
 *
 * Tested only where MONGO_URL points at a replica set (test/contract/mongo.test.ts); the mappings
 * and error translation are unit-tested everywhere (test/unit/lib/store/mongo.test.ts).
 */
import type { UserId } from "../../domain/ids";
import { EARLIER_DEVICE } from "../../domain/accounts/sessions";
import { MongoClient } from "mongodb";
import type { Store } from "../port";
import { MongoAccounts } from "./accounts";
import { MongoAttachments } from "./attachments";
import { MongoAudit } from "./audit";
import { MongoContext, REGISTRATIONS_LOCK, WRITE_TIMEOUT_MS } from "./context";
import { COLLECTIONS } from "./documents";
import { assertTransactionsSupported } from "./errors";
import { MongoHousekeeping } from "./housekeeping";
import { MongoInvites } from "./invites";
import { MongoItems } from "./items";
import { MongoOutbox } from "./outbox";
import { MongoSecurity } from "./security";
import { MongoSends } from "./sends";
import { MongoEmergency } from "./emergency";
import { MongoOrgLog } from "./org-log";
import { MongoSessions } from "./sessions";
import { MongoVaults } from "./vaults";

export interface MongoStoreOptions {
  /** The database; default: the one named in the URL (the driver's default, `test`, otherwise). */
  dbName?: string;
  serverSelectionTimeoutMS?: number;
}

/** Connects, refuses a server that cannot run transactions, creates collections and indexes. */
export async function openMongoStore(url: string, opts: MongoStoreOptions = {}): Promise<Store> {
  const client = new MongoClient(url, {
    readConcern: { level: "majority" },
    writeConcern: { w: "majority", wtimeoutMS: WRITE_TIMEOUT_MS },
    readPreference: "primary",
    serverSelectionTimeoutMS: opts.serverSelectionTimeoutMS ?? 10_000,
  });
  try {
    await client.connect();
    const db = client.db(opts.dbName);
    assertTransactionsSupported(await db.admin().command({ hello: 1 }));
    const c = new MongoContext(client, db);
    await createIndexes(c);
    await backfillSessions(c);
    return {
      accounts: new MongoAccounts(c),
      sessions: new MongoSessions(c),
      vaults: new MongoVaults(c),
      items: new MongoItems(c),
      attachments: new MongoAttachments(c),
      sends: new MongoSends(c),
      emergency: new MongoEmergency(c),
      invites: new MongoInvites(c),
      orgLog: new MongoOrgLog(c),
      audit: new MongoAudit(c),
      outbox: new MongoOutbox(c),
      housekeeping: new MongoHousekeeping(c),
      security: new MongoSecurity(c),
      close: () => client.close(),
    };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Every login an earlier release made (a refresh-token family with an active token) becomes a
 * session, as SQL migration 011 does, once (a marker in `server_keys` says it was): idempotent (an
 * upsert that sets only what is missing), so nodes starting at once may both run it.
 */
async function backfillSessions(c: MongoContext): Promise<void> {
  const DONE = "backfill:sessions";
  if (await c.serverKeys.findOne({ _id: DONE })) return;
  const families = c.refreshTokens.aggregate<{ _id: string; userId: UserId; first: string; last: string; expiresAt: string }>([
    { $match: { status: "active" } },
    {
      $group: {
        _id: "$familyId",
        userId: { $first: "$userId" },
        first: { $min: "$createdAt" },
        last: { $max: "$createdAt" },
        expiresAt: { $max: "$expiresAt" },
      },
    },
  ]);
  for await (const f of families) {
    await c.sessions.updateOne(
      { _id: f._id },
      {
        $setOnInsert: {
          userId: f.userId,
          deviceName: EARLIER_DEVICE,
          createdAt: f.first,
          lastUsedAt: f.last,
          address: "unknown",
          expiresAt: f.expiresAt,
        },
      },
      { upsert: true },
    );
  }
  await c.serverKeys.updateOne({ _id: DONE }, { $setOnInsert: { value: "done", createdAt: new Date().toISOString() } }, { upsert: true });
}

/** Idempotent: creating an index that exists is a no-op, so every node may run it at start. */
async function createIndexes(c: MongoContext): Promise<void> {
  await c.users.createIndexes([{ key: { email: 1 }, unique: true }, { key: { orgId: 1, createdAt: 1 } }]);
  await c.members.createIndexes([{ key: { vaultId: 1, userId: 1 }, unique: true }, { key: { userId: 1 } }]);
  await c.items.createIndexes([{ key: { vaultId: 1, createdAt: 1, itemId: 1 } }]);
  // History by item (listHistory, keepRevision) and oldest first (makeRoom); the trash by vault (listTrash) and by age (the sweeper).
  await c.itemRevisions.createIndexes([
    { key: { vaultId: 1, itemId: 1, revision: 1 }, unique: true },
    { key: { vaultId: 1, replacedAt: 1 } },
  ]);
  await c.itemTrash.createIndexes([{ key: { vaultId: 1, deletedAt: 1 } }, { key: { deletedAt: 1 } }]);
  // A delta read's changes in order (lib/domain/items/changes.ts).
  await c.itemChanges.createIndexes([{ key: { vaultId: 1, seq: 1 } }]);
  await c.invites.createIndexes([
    { key: { tokenHash: 1 }, unique: true },
    { key: { orgId: 1, status: 1, createdAt: -1 } },
    { key: { expiresAt: 1 } },
  ]);
  // The sweeper's purge takes expired tokens (by expiresAt) and revoked ones (this partial index: only those).
  await c.refreshTokens.createIndexes([
    { key: { familyId: 1 } },
    { key: { expiresAt: 1 } },
    { key: { status: 1 }, name: "revoked_1", partialFilterExpression: { status: "revoked" } },
  ]);
  await c.sessions.createIndexes([{ key: { userId: 1, lastUsedAt: -1 } }, { key: { expiresAt: 1 } }]);
  await c.rememberedDevices.createIndexes([{ key: { tokenHash: 1 }, unique: true }, { key: { userId: 1, lastUsedAt: -1 } }]);
  await c.keyLog.createIndexes([{ key: { userId: 1, version: 1 }, unique: true }]);
  await c.orgLog.createIndexes([{ key: { orgId: 1, seq: 1 }, unique: true }]);
  await c.auditEvents.createIndexes([{ key: { orgId: 1, seq: 1 }, unique: true }]);
  await c.rosterLinks.createIndexes([{ key: { vaultId: 1, seq: 1 }, unique: true }]);
  await c.itemLinks.createIndexes([{ key: { vaultId: 1, seq: 1 }, unique: true }]);
  await c.outbox.createIndexes([{ key: { ord: 1, _id: 1 } }]);
  // An account's security (SQL: migration 015). One authenticator app per account, any number of
  // security keys: unique on (userId, slot), so two enrolments of an app at once cannot both land.
  await c.secondFactors.createIndexes([{ key: { userId: 1, slot: 1 }, unique: true }, { key: { userId: 1, createdAt: 1 } }]);
  await c.recoveryCodes.createIndexes([{ key: { userId: 1 } }]);
  await c.recoveryEnrolments.createIndexes([{ key: { enrolmentId: 1 }, unique: true }]);
  await c.recoveryShares.createIndexes([{ key: { enrolmentId: 1, trusteeId: 1 } }, { key: { trusteeId: 1 } }]);
  await c.recoveryRequests.createIndexes([
    { key: { userId: 1, status: 1, createdAt: -1 } },
    { key: { enrolmentId: 1, status: 1 } },
    { key: { addressKey: 1, status: 1 } },
  ]);
  await c.recoveryApprovals.createIndexes([{ key: { requestId: 1, approvedAt: 1 } }]);
  // Sign-in passkeys (SQL: migration 024): `_id` is the credential id; an account's, oldest first.
  await c.passkeyLogins.createIndexes([{ key: { userId: 1, createdAt: 1 } }]);
  // Attachments (SQL: migration 025): an item's, oldest first; an organization's usage; the
  // sweeper's unfinished uploads; an attachment's chunks, and a chunk file's record.
  await c.attachments.createIndexes([
    { key: { vaultId: 1, itemId: 1, createdAt: 1 } },
    { key: { orgId: 1 } },
    { key: { complete: 1, createdAt: 1 } },
  ]);
  await c.attachmentChunks.createIndexes([{ key: { attachmentId: 1, index: 1 } }, { key: { fileId: 1 } }]);
  // Sends (SQL: migration 026): a member's, newest first; an organization's usage; the sweeper's
  // expired, unfinished and last-viewed ones; a send's parts in order.
  await c.sends.createIndexes([
    { key: { ownerId: 1, createdAt: -1 } },
    { key: { orgId: 1, expiresAt: 1 } },
    { key: { expiresAt: 1 } },
    { key: { complete: 1, createdAt: 1 } },
    { key: { partsGoneAt: 1 } },
  ]);
  // Unique by place; the sizes besides, so that a send's part sizes are read from the index alone, never its parts' bytes.
  await c.sendParts.createIndexes([{ key: { sendId: 1, idx: 1 }, unique: true }, { key: { sendId: 1, idx: 1, sealedBytes: 1 } }]);
  // Emergency access grants (SQL: migration 027): one per grantor and grantee; a grantee's.
  await c.emergencyGrants.createIndexes([{ key: { grantorId: 1, granteeId: 1 }, unique: true }, { key: { granteeId: 1 } }]);
  await createWrittenCollections(c);
}

/**
 * Collections a transaction writes must exist beforehand; the lock document too, so that two
 * first registrations never race to insert it.
 */
async function createWrittenCollections(c: MongoContext): Promise<void> {
  for (const name of [
    COLLECTIONS.orgs,
    COLLECTIONS.vaults,
    COLLECTIONS.auditHeads,
    COLLECTIONS.outbox,
    COLLECTIONS.sessions,
    COLLECTIONS.refreshTokens,
    COLLECTIONS.orgPolicies,
    COLLECTIONS.itemChanges,
    COLLECTIONS.attachments,
    COLLECTIONS.attachmentChunks,
    COLLECTIONS.sends,
    COLLECTIONS.sendParts,
    COLLECTIONS.emergencyGrants,
  ])
    await c.db.createCollection(name).catch(ignoreExists);
  await c.locks.updateOne({ _id: REGISTRATIONS_LOCK }, { $setOnInsert: { seq: 0 } }, { upsert: true }).catch(ignoreDuplicate);
}

/** It exists already (an earlier start, or another node): fine. */
function ignoreExists(err: unknown): void {
  if ((err as { codeName?: string }).codeName !== "NamespaceExists") throw err;
}

function ignoreDuplicate(err: unknown): void {
  if ((err as { code?: number }).code !== 11000) throw err;
}
