/**
 * The sweeper's lease: of sweepers on several nodes (two PostgreSQL stores on one database, two
 * Redis connections), one sweeps at a time; with Redis configured but down, none does.
 */
import { newId, type InviteId, type OrgId, type UserId } from "../../lib/domain/ids";
import { randomBytes } from "node:crypto";
import { MemoryLocks, RedisLocks, type Locks } from "../../lib/locks";
import { connectRedis, type RedisLink } from "../../lib/redis";
import { openSqlStore } from "../../lib/store/sql/store";
import { openPostgres, postgresOps } from "../../lib/store/sql/postgres";
import type { Store } from "../../lib/store/port";
import { SWEEP_LOCK, sweepOnce } from "../../lib/workers/sweeper";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres";
import { sleep } from "../helpers/wait";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const quiet = { warn: () => undefined, info: () => undefined };
const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();

let database: TestDatabase;
let stores: Store[];
let links: RedisLink[];
let orgId: OrgId;
let ownerId: UserId;

beforeAll(async () => {
  database = await createTestDatabase();
  stores = [];
  for (let i = 0; i < 2; i++) stores.push(await openSqlStore(openPostgres(database.url, { poolSize: 4 }), postgresOps));
  const prefix = `test-${randomBytes(4).toString("hex")}:`;
  links = [await connectRedis(REDIS_URL, quiet, prefix), await connectRedis(REDIS_URL, quiet, prefix)];
  orgId = newId();
  ownerId = newId();
  await stores[0]!.accounts.registerOwnerOfNewOrg({
    user: {
      userId: ownerId,
      email: `${ownerId}@example.test`,
      authHash: "h",
      createdAt: at(),
      kdf: { algorithm: "pbkdf2-sha256", salt: "AAAA", iterations: 600000 },
      publicKey: "AAAA",
      signingPublicKey: "AAAA",
      publicKeySignature: "AAAA",
      encryptedPrivateKey: "AAAA",
      encryptedSigningPrivateKey: "AAAA",
    },
    org: { orgId, name: "org", createdAt: at() },
    onlyIfFirstUser: false,
  });
});

afterAll(async () => {
  for (const link of links ?? []) await link.close();
  for (const store of stores ?? []) await store.close();
  await database?.drop();
});

async function expiredInvites(n: number): Promise<InviteId[]> {
  const ids: InviteId[] = [];
  for (let i = 0; i < n; i++) {
    const inviteId = newId<InviteId>();
    ids.push(inviteId);
    await stores[0]!.invites.createInvite({
      invite: {
        inviteId,
        orgId,
        email: `${inviteId}@example.test`,
        role: "member",
        inviterId: ownerId,
        status: "pending",
        expiresAt: at(-1000),
        createdAt: at(-2000),
      },
      tokenHash: newId(),
    });
  }
  return ids;
}

test.each<[string, () => Locks[]]>([
  ["Redis, two connections (two nodes)", () => links.map((l) => new RedisLocks(l))],
  [
    "in-process, one node",
    () => {
      const l = new MemoryLocks();
      return [l, l];
    },
  ],
])("two sweepers started at once: one sweeps, the other does not; then the next round sweeps again (%s)", async (_name, makeLocks) => {
  const locks = makeLocks();
  for (let round = 0; round < 10; round++) {
    const ids = await expiredInvites(3);
    const outcomes = await Promise.all([
      sweepOnce(stores[0]!, locks[0]!, { leaseMs: 60_000, inviteRetentionMs: 0 }),
      sweepOnce(stores[1]!, locks[1]!, { leaseMs: 60_000, inviteRetentionMs: 0 }),
    ]);
    expect(outcomes.filter((o) => o.ran)).toHaveLength(1);
    expect(outcomes.find((o) => o.ran)).toMatchObject({ invites: 3 });
    for (const id of ids) expect(await stores[1]!.invites.getInvite(id)).toBeNull();
  }
});

test("a sweeper that died holding the lease keeps the others out until the lease runs out", async () => {
  const [a, b] = links.map((l) => new RedisLocks(l));
  const dead = await a!.tryAcquire(SWEEP_LOCK, 800);
  expect(dead).not.toBeNull();
  const ids = await expiredInvites(1);
  expect(await sweepOnce(stores[1]!, b!, { leaseMs: 60_000, inviteRetentionMs: 0 })).toEqual({ ran: false });
  expect(await stores[1]!.invites.getInvite(ids[0]!)).not.toBeNull();
  await sleep(1_000);
  expect(await sweepOnce(stores[1]!, b!, { leaseMs: 60_000, inviteRetentionMs: 0 })).toMatchObject({ ran: true, invites: 1 });
  // The late release of the dead holder's lease does not free a lease someone else holds now.
  const current = await b!.tryAcquire(SWEEP_LOCK, 60_000);
  await dead!.release();
  expect(await a!.tryAcquire(SWEEP_LOCK, 60_000)).toBeNull();
  await current!.release();
});

test("Redis configured but unreachable: no sweeper runs (the next round will), rather than every node at once", async () => {
  const down = await connectRedis("redis://127.0.0.1:1", quiet, "x:");
  try {
    await expiredInvites(1);
    expect(await sweepOnce(stores[0]!, new RedisLocks(down), { leaseMs: 60_000, inviteRetentionMs: 0 })).toEqual({ ran: false });
  } finally {
    await down.close();
  }
});
