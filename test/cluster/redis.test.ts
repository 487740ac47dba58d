/**
 * The Redis implementations of the token and counter ports, against the machine's Redis, as two
 * nodes would use them: two connections in one namespace.
 */
import { newId, type InviteId, type OrgId, type UserId } from "../../lib/domain/ids";
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import type { Invite } from "../../lib/domain/orgs/invites";
import { RedisCounters } from "../../lib/limits/redis-counters";
import { connectRedis, type RedisLink } from "../../lib/redis";
import { openSqlStore } from "../../lib/store/sql/store";
import { openSqlite, sqliteOps } from "../../lib/store/sql/sqlite";
import type { Store } from "../../lib/store/port";
import { RedisInviteTokens } from "../../lib/tokens/redis-invite-tokens";
import { newUserKeys, registrationBundle } from "../helpers/crypto";
import { REDIS_URL } from "../helpers/cluster";
import { tempDir } from "../helpers/server";
import { sleep } from "../helpers/wait";

const quiet = { warn: () => undefined, info: () => undefined };
let dir: string;
let store: Store;
let links: RedisLink[];
let orgId: OrgId, userId: UserId;

beforeAll(async () => {
  dir = tempDir("vault-redis-");
  store = await openSqlStore(openSqlite(dir), sqliteOps);
  const prefix = `test-${randomBytes(4).toString("hex")}:`;
  links = [await connectRedis(REDIS_URL, quiet, prefix), await connectRedis(REDIS_URL, quiet, prefix)];
  const now = new Date().toISOString();
  const user = await store.accounts.registerOwnerOfNewOrg({
    user: {
      ...registrationBundle(await newUserKeys()),
      userId: newId<UserId>(),
      email: "o@example.test",
      authHash: "h",
      createdAt: now,
    } as never,
    org: { orgId: newId<OrgId>(), name: "o", createdAt: now },
    onlyIfFirstUser: false,
  });
  orgId = user.orgId;
  userId = user.userId;
});
afterAll(async () => {
  for (const l of links) await l.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function newInvite(): Promise<{ invite: Invite; hash: string }> {
  const now = Date.now();
  const invite: Invite = {
    inviteId: newId<InviteId>(),
    orgId,
    email: `${newId().slice(0, 8)}@example.test`,
    role: "member",
    inviterId: userId,
    status: "pending",
    expiresAt: new Date(now + 3_600_000).toISOString(),
    createdAt: new Date(now).toISOString(),
  };
  const hash = randomBytes(32).toString("hex");
  await store.invites.createInvite({ invite, tokenHash: hash });
  return { invite, hash };
}

test("rate-limit counters are shared between nodes, in one window", async () => {
  const [a, b] = links.map((l) => new RedisCounters(l)) as [RedisCounters, RedisCounters];
  const key = `k-${newId()}`;
  expect((await a.add(key, 1, 60_000)).count).toBe(1);
  expect((await b.add(key, 1, 60_000)).count).toBe(2);
  const read = await a.add(key, 0, 60_000);
  expect(read.count).toBe(2);
  expect(read.resetInMs).toBeGreaterThan(55_000);
  expect(read.resetInMs).toBeLessThanOrEqual(60_000);
});

test("a mark renews its window at every use, on either node, and reads as 1", async () => {
  const [a, b] = links.map((l) => new RedisCounters(l)) as [RedisCounters, RedisCounters];
  const key = `m-${newId()}`;
  await a.mark(key, 1_000);
  await sleep(600);
  await b.mark(key, 1_000); // renewed: it outlives the first window
  await sleep(600);
  expect((await a.add(key, 0, 1_000)).count).toBe(1);
  await sleep(600);
  expect((await b.add(key, 0, 1_000)).count).toBe(0);
});

test("the one-shot lock lets exactly one of many concurrent callers on two nodes through", async () => {
  const [a, b] = links.map((l) => new RedisInviteTokens(store, l)) as [RedisInviteTokens, RedisInviteTokens];
  const hash = randomBytes(32).toString("hex");
  const got = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).lockOnce(hash, 10_000)));
  expect(got.filter(Boolean)).toHaveLength(1);
  await a.release(hash);
  expect(await b.lockOnce(hash, 10_000)).toBe(true);
});

test("lookups are cached until the invite changes; forgetting it on one node drops it for all", async () => {
  const [a, b] = links.map((l) => new RedisInviteTokens(store, l)) as [RedisInviteTokens, RedisInviteTokens];
  const { invite, hash } = await newInvite();
  expect((await a.find(hash))?.status).toBe("pending");
  // Revoked in the database behind the cache's back: the cached entry still answers ...
  await store.invites.revokeInvite({ inviteId: invite.inviteId, orgId, now: new Date().toISOString() });
  expect((await b.find(hash))?.status).toBe("pending");
  // ... until a node forgets it, as the services do after a revoke or a consume.
  await a.forget(invite.inviteId);
  expect((await b.find(hash))?.status).toBe("revoked");
  expect(await a.find(randomBytes(32).toString("hex"))).toBeNull();
});

test("a lookup that read the database before the invite changed cannot cache the old state after it", async () => {
  const [a] = links.map((l) => new RedisInviteTokens(store, l)) as [RedisInviteTokens];
  const { invite, hash } = await newInvite();
  // The slow lookup reads "pending"; meanwhile the invite is revoked and forgotten; then the lookup
  // tries to fill the cache with what it read.
  const realFind = store.invites.findInviteByTokenHash.bind(store.invites);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slowInvites: Store["invites"] = Object.create(store.invites);
  slowInvites.findInviteByTokenHash = async (h: string) => {
    const v = await realFind(h);
    await gate;
    return v;
  };
  const slowStore: Store = { ...store, invites: slowInvites };
  const slow = new RedisInviteTokens(slowStore, links[1]!);
  const stale = slow.find(hash);
  await sleep(50);
  await store.invites.revokeInvite({ inviteId: invite.inviteId, orgId, now: new Date().toISOString() });
  await a.forget(invite.inviteId);
  release();
  expect((await stale)?.status).toBe("pending"); // what it read, for its own caller
  expect((await a.find(hash))?.status).toBe("revoked"); // not cached for anyone else
});
