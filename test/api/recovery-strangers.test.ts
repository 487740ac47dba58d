/**
 * Account recovery as a stranger sees it, on SQLite and PostgreSQL (docs/design/account-recovery.md,
 * "What a stranger learns"): requests for an enrolled address and for an unknown one answer alike
 * in every field and header, in their status over time and their k, whatever the address's other
 * requests or its owner do; no stranger's request displaces the owner's, nor uses up what the
 * owner's request needs; and on PostgreSQL, both take the same work, counted by the database.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { MemoryPinStore, VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { generateRsaKeyPair } from "../../protocol/crypto/primitives";
import { RECOVERY_REQUEST_TTL_MS } from "../../lib/domain/accounts/recovery";
import { RECOVERY_POLLS_PER_HOUR } from "../../lib/domain/accounts/recovery-requests";
import { Api, type Reply } from "../helpers/client";
import { createTestDatabase, SQL_ENGINES } from "../helpers/postgres";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { sleep } from "../helpers/wait";

jest.setTimeout(300_000);

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;
const NEW_PASSWORD = "a brand new horse staple battery";
/** Client addresses as the proxy in front (TRUST_PROXY=1) reports them. */
const from = (ip: string) => ({ "x-forwarded-for": ip });
/** What differs between any two answers whatever the address: the date, the request's id, the new request's own id. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const headersOf = (r: Reply) =>
  [...r.headers.entries()]
    .filter(([name]) => !["date", "x-request-id"].includes(name))
    .map(([name, value]) => `${name}: ${value.replace(UUID, "<id>")}`)
    .sort();
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;
/** An answer with what must differ (ids, times, the secret) named, not shown: all else must be the same for any address. */
const shapeOf = (r: Reply) => ({
  status: r.status,
  headers: headersOf(r),
  body: JSON.parse(
    JSON.stringify(r.body ?? null)
      .replace(UUID, "<id>")
      .replace(TIME, "<time>")
      .replace(/"requestToken":"[^"]+"/, '"requestToken":"<secret>"'),
  ),
});

/** An organization with bob enrolled, k = 3 of alice, carol and dave, on a server behind one trusted proxy. */
async function enrolledWorld(env: Record<string, string>) {
  const server = await startTestServer({ ...env, REGISTRATION_MODE: "open", TRUST_PROXY: "1" });
  const alice = new VaultClient({ baseUrl: server.url });
  await alice.register({ email: email("alice"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  const invited = async (role: "admin" | "member") => {
    const address = email(role);
    const { code } = await alice.invites.create(address, role);
    const c = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
    await c.register({ email: address, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
    return c;
  };
  const [carol, dave, bob] = [await invited("admin"), await invited("admin"), await invited("member")];
  for (const t of [carol, dave]) await bob.keys.trust(t.account.userId, await t.keys.own(), t.account.email);
  await bob.recovery.enrol([alice.account.userId, carol.account.userId, dave.account.userId], 3);
  const publicKey = toBase64((await generateRsaKeyPair(2048)).publicKeyDer);
  return { server, api: new Api(server.url), alice, carol, dave, bob, trustees: [alice, carol, dave], publicKey };
}

/** A device of bob's own, from client address `ip`. */
const deviceAt = (server: TestServer, ip: string) =>
  new VaultClient({
    baseUrl: server.url,
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...from(ip) } }),
  });

describe.each(SQL_ENGINES)("recovery requests a stranger makes, on %s", (_engine, openDatabase) => {
  let world: Awaited<ReturnType<typeof enrolledWorld>>;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    world = await enrolledWorld({ ...db.env, REGISTER_RATE_LIMIT: "30" });
  });
  afterAll(async () => {
    await world?.server.stop();
    await dropDatabase?.();
  });

  const start = (address: string, ip: string, binding?: string) =>
    world.api.post("/recovery/requests", { body: { email: address, publicKey: world.publicKey, binding }, headers: from(ip) });
  const poll = (r: Reply, ip: string) =>
    world.api.post(`/recovery/requests/${r.body.requestId}/state`, { body: { requestToken: r.body.requestToken }, headers: from(ip) });
  /** The requests of the first test, for an enrolled address and an unknown one. */
  let all: Reply[] = [];
  /** The distinct shapes of what `what` answers for each of them. */
  const sameEverywhere = async (what: (r: Reply) => Promise<Reply>) => {
    const seen = new Set<string>();
    for (const r of all) seen.add(JSON.stringify(shapeOf(await what(r))));
    return [...seen].map((x) => JSON.parse(x));
  };
  const signIn = (r: Reply, ip: string) =>
    world.api.post(`/recovery/requests/${r.body.requestId}/session`, {
      body: { requestToken: r.body.requestToken, signature: toBase64(new Uint8Array(64)) },
      headers: from(ip),
    });

  test("the same answers, headers, status over time and k for an enrolled address and an unknown one, past the caps and whatever the owner does", async () => {
    const unknown = email("nobody");
    const ip = "203.0.113.10";
    const made: Record<string, Reply[]> = { real: [], decoy: [] };
    // Six each: past the address's and the client's caps, where requests used to give way.
    for (let i = 0; i < 6; i++) {
      made.real!.push(await start(world.bob.account.email, ip));
      made.decoy!.push(await start(unknown, ip));
    }
    all = [...made.real!, ...made.decoy!];
    expect(new Set(all.map((r) => JSON.stringify(shapeOf(r))))).toEqual(new Set([JSON.stringify(shapeOf(all[0]!))]));
    expect(new Set(all.map((r) => r.body.requestToken.length)).size).toBe(1);
    expect(new Set(all.map((r) => Date.parse(r.body.expiresAt) - Date.now() > RECOVERY_REQUEST_TTL_MS - 60_000))).toEqual(new Set([true]));
    // Polled: every request reads as one open request with no approvals and k = 2 (bob's needs 3).
    expect(await sameEverywhere((r) => poll(r, ip))).toEqual([
      expect.objectContaining({ status: 200, body: { requestId: "<id>", status: "pending", threshold: 2, approvals: [] } }),
    ]);
    // Bob, signed in, sees the ones for him (some held back: ended) and cancels one: its requester sees nothing change.
    const { requests } = await world.bob.recovery.requests();
    expect(requests.filter((r) => made.real!.some((m) => m.body.requestId === r.requestId)).map((r) => r.status)).toContain("cancelled");
    await world.bob.recovery.cancel(made.real![1]!.body.requestId);
    expect(await sameEverywhere((r) => poll(r, ip))).toHaveLength(1);
    // Signing in with any of them: the same refusal, naming the same k.
    expect(await sameEverywhere((r) => signIn(r, ip))).toEqual([
      expect.objectContaining({
        status: 409,
        body: { error: expect.objectContaining({ message: "This recovery has 0 of the 2 approvals it needs" }) },
      }),
    ]);
  });

  test("a stranger's requests, from as many client addresses as the caps take, neither displace the owner's request nor keep it from its trustees", async () => {
    const device = deviceAt(world.server, "198.51.100.7");
    const pending = await device.recovery.start(world.bob.account.email);
    for (const ip of ["203.0.113.21", "203.0.113.22", "203.0.113.23", "203.0.113.24"])
      for (let i = 0; i < 4; i++)
        expect((await start(world.bob.account.email, ip, `stranger-binding-${ip}-${"x".repeat(40)}`)).status).toBe(201);
    const confirmations = [];
    for (const t of world.trustees) {
      expect((await t.recovery.tasks()).map((task) => task.requestId)).toContain(pending.requestId);
      confirmations.push((await t.recovery.approve(pending.requestId, pending.code)).confirmation);
    }
    // Approved, it shows bob's k; and it recovers the account.
    expect(await device.recovery.progress(pending)).toEqual({ approvals: 3, threshold: 3, status: "pending" });
    await device.recovery.finish(pending, NEW_PASSWORD, confirmations[0]!);
    await new VaultClient({ baseUrl: world.server.url }).login(world.bob.account.email, NEW_PASSWORD);
    // Bob enrols again for the tests after this one (the recovery spent the enrolment).
    world.bob = new VaultClient({ baseUrl: world.server.url, pins: new MemoryPinStore() });
    await world.bob.login(device.account.email, NEW_PASSWORD);
    for (const t of world.trustees) await world.bob.keys.trust(t.account.userId, await t.keys.own(), t.account.email);
    await world.bob.recovery.enrol(
      world.trustees.map((t) => t.account.userId),
      3,
    );
  });

  test("a device that starts over with its binding secret replaces its own request, and no one else's", async () => {
    const owner = "owner-binding-".padEnd(48, "o");
    const first = await start(world.bob.account.email, "198.51.100.8", owner);
    // A stranger with another secret, from the same client address: bob's first request stays.
    await start(world.bob.account.email, "198.51.100.8", "stranger-binding-".padEnd(48, "s"));
    const open = async () => (await world.alice.recovery.tasks()).map((t) => t.requestId);
    expect(await open()).toContain(first.body.requestId);
    const again = await start(world.bob.account.email, "198.51.100.99", owner);
    expect(await open()).toContain(again.body.requestId);
    expect(await open()).not.toContain(first.body.requestId);
    // A secret too short to be one is refused, as any bad field.
    expect((await start(world.bob.account.email, "198.51.100.8", "short")).status).toBe(400);
    for (const r of [first, again]) await world.bob.recovery.cancel(r.body.requestId).catch(() => undefined);
  });

  test("a stranger at the owner's client address uses up its starts, not the owner's polls; each request's own budget runs out alike", async () => {
    const ip = "198.51.100.9";
    const device = deviceAt(world.server, ip);
    const pending = await device.recovery.start(world.bob.account.email);
    const decoy = await start(email("nobody"), ip);
    // Secrets this server never sealed count against the client address, up to its limit (REGISTER_RATE_LIMIT).
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const r = await world.api.post(`/recovery/requests/${randomUUID()}/state`, { body: { requestToken: "forged" }, headers: from(ip) });
      if (r.status === 429) refused++;
    }
    expect(refused).toBeGreaterThan(0);
    expect((await start(world.bob.account.email, ip)).status).toBe(429);
    // The owner's request, polled with its own secret, still answers.
    expect(await device.recovery.progress(pending)).toEqual({ approvals: 0, threshold: 2, status: "pending" });
    await poll(decoy, ip);
    // Each request's polls have a budget of their own, the same for a decoy and a real one.
    const real = { body: { requestId: pending.requestId, requestToken: pending.requestToken } } as Reply;
    const limits: Array<Array<number>> = [];
    for (const r of [real, decoy]) {
      const statuses = [];
      for (let i = 0; i < RECOVERY_POLLS_PER_HOUR + 1; i++) statuses.push((await poll(r, ip)).status);
      limits.push([statuses.indexOf(429), statuses.filter((s) => s === 429).length]);
    }
    expect(limits[0]).toEqual(limits[1]);
    expect(limits[0]![0]).toBeGreaterThan(0);
    const [realLimited, decoyLimited] = [await poll(real, ip), await poll(decoy, ip)];
    expect(shapeOf(realLimited)).toEqual(shapeOf(decoyLimited));
    await world.bob.recovery.cancel(pending.requestId);
  });

  // Last: the clock only moves forward.
  test("past their lifetime, the requests of an enrolled address and of an unknown one are gone alike", async () => {
    world.server.clock.advance(RECOVERY_REQUEST_TTL_MS + 60_000);
    expect(await sameEverywhere((r) => poll(r, "203.0.113.10"))).toEqual([expect.objectContaining({ status: 404 })]);
  });
});

/** The database's own counts of what each table saw (PostgreSQL's statistics), for the tables recovery requests touch. */
const COUNTED = [
  "users",
  "recovery_enrolments",
  "recovery_shares",
  "recovery_requests",
  "recovery_approvals",
  "outbox",
  "audit_events",
  "audit_heads",
];
type Counts = Record<string, number>;

async function tableCounts(url: string): Promise<Counts> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Scans of a table by either plan (the planner may choose another as a table grows), rows written, changed, deleted.
    const { rows } = await client.query(
      `SELECT relname, seq_scan + coalesce(idx_scan, 0) AS scans, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables WHERE relname = ANY($1)`,
      [COUNTED],
    );
    const out: Counts = {};
    for (const r of rows)
      for (const k of ["scans", "n_tup_ins", "n_tup_upd", "n_tup_del"]) {
        // The outbox relay polls every second whatever happens: its reads are time, not work.
        if (r.relname === "outbox" && k === "scans") continue;
        out[`${r.relname}.${k}`] = Number(r[k]);
      }
    return out;
  } finally {
    await client.end();
  }
}

/** The counts once every connection has reported them (a backend reports at most each second, an idle one within ten). */
async function settledCounts(url: string): Promise<Counts> {
  await sleep(11_000);
  let last = await tableCounts(url);
  for (let same = 0; same < 3;) {
    await sleep(1_000);
    const now = await tableCounts(url);
    same = JSON.stringify(now) === JSON.stringify(last) ? same + 1 : 0;
    last = now;
  }
  return last;
}

const minus = (a: Counts, b: Counts) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k]! - (b[k] ?? 0)]));

describe("the work a request takes, on PostgreSQL", () => {
  test("starting, polling and signing in with requests for an enrolled address and an unknown one: the same reads and writes of every table", async () => {
    const database = await createTestDatabase();
    const world = await enrolledWorld({ DATABASE_URL: database.url, PG_POOL_SIZE: "10", REGISTER_RATE_LIMIT: "1000" });
    try {
      const ip = "203.0.113.50";
      const round = async (address: string, n: number) => {
        for (let i = 0; i < n; i++) {
          const r = await world.api.post("/recovery/requests", { body: { email: address, publicKey: world.publicKey }, headers: from(ip) });
          const secret = { requestToken: r.body.requestToken };
          await world.api.post(`/recovery/requests/${r.body.requestId}/state`, { body: secret, headers: from(ip) });
          await world.api.post(`/recovery/requests/${r.body.requestId}/session`, {
            body: { ...secret, signature: toBase64(new Uint8Array(64)) },
            headers: from(ip),
          });
          // Past the audit worker's linger: each event a batch of its own, as any request alone would be.
          await sleep(250);
        }
      };
      const unknown = email("nobody");
      // Once each first, so that both start from the same place (plans prepared, the audit chains begun).
      await round(world.bob.account.email, 1);
      await round(unknown, 1);
      const before = await settledCounts(database.url);
      await round(world.bob.account.email, 8);
      const afterReal = await settledCounts(database.url);
      await round(unknown, 8);
      const afterDecoy = await settledCounts(database.url);
      const real = minus(afterReal, before);
      expect(real["recovery_requests.n_tup_ins"]).toBe(8);
      expect(minus(afterDecoy, afterReal)).toEqual(real);
    } finally {
      await world.server.stop();
      await database.drop();
    }
  });
});
