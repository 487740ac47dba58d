/**
 * Emergency access end to end, on SQLite and PostgreSQL: real SDK clients (a grantor, grantees and
 * a stranger) against the real service, with its clock moved past the wait instead of waiting. A
 * read grant opens a session that only reads and ends when the grantor refuses; a takeover sets a
 * new password without the old one and ends every session of the account; the level and wait are
 * fixed once asked; a password change leaves them stale until made again. Requests at once: exactly one counts.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(240_000);

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;
const HOUR = 3_600_000;
const NEW_PASSWORD = "a brand new horse staple battery";

describe.each(SQL_ENGINES)("emergency access on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let dropDatabase: () => Promise<void>;
  let alice: VaultClient;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open" });
    alice = new VaultClient({ baseUrl: server.url });
    await alice.register({ email: email("alice"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  async function member(tag: string): Promise<VaultClient> {
    const address = email(tag);
    const { code } = await alice.invites.create(address, "member");
    const c = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
    await c.register({ email: address, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
    return c;
  }

  /** `grantor` compared `grantee`'s fingerprint out of band, and the other way round. */
  async function acquainted(grantor: VaultClient, grantee: VaultClient) {
    await grantor.keys.trust(grantee.account.userId, await grantee.keys.own(), grantee.account.email);
    await grantee.keys.trust(grantor.account.userId, await grantor.keys.own(), grantor.account.email);
  }

  test("a read grant: asked, held through the wait, opened read-only; the grantor's refusal ends the session", async () => {
    const [bob, carol] = [await member("bob"), await member("carol")];
    const vault = await bob.vaults.create("Mine", "personal");
    await bob.items.add(vault.vaultId, { name: "bank", fields: { username: "bob", password: "s3cret" } });
    // A grantee whose keys bob knows only from the server: refused before anything is sent.
    await expect(bob.emergency.grant(carol.account.userId, { level: "read", waitHours: 48 })).rejects.toMatchObject({
      code: "EMERGENCY_GRANTEE_UNVERIFIED",
    });
    await acquainted(bob, carol);
    const made = await bob.emergency.grant(carol.account.userId, { level: "read", waitHours: 48 });
    expect(made).toMatchObject({ status: "idle", level: "read", waitHours: 48, email: carol.account.email });

    const [seen] = (await carol.emergency.list()).received;
    expect(seen).toMatchObject({ grantId: made.grantId, email: bob.account.email, level: "read", waitHours: 48, status: "idle" });
    await expect(carol.emergency.open(made.grantId)).rejects.toMatchObject({ status: 409 });
    const asked = await carol.emergency.request(made.grantId);
    expect(asked.status).toBe("waiting");
    expect(Date.parse(asked.availableAt!) - Date.parse(asked.requestedAt!)).toBe(48 * HOUR);
    // The grantor is told on every device: the grant shows the request.
    expect((await bob.emergency.list()).granted[0]).toMatchObject({ status: "waiting", requestedAt: asked.requestedAt });
    await expect(carol.emergency.request(made.grantId)).rejects.toMatchObject({ status: 409 });
    server.clock.advance(47 * HOUR);
    await expect(carol.emergency.open(made.grantId)).rejects.toMatchObject({ status: 409 });

    server.clock.advance(HOUR);
    const release = await carol.emergency.open(made.grantId);
    expect(release).toMatchObject({ level: "read", grantor: { userId: bob.account.userId, email: bob.account.email } });
    const asBob = new VaultClient({ baseUrl: server.url });
    await asBob.takeUpEmergency(release);
    const items = await asBob.items.list(vault.vaultId);
    expect(items.map((i) => i.fields?.password)).toEqual(["s3cret"]);
    // Reads only: a write is refused by the gateway, and nothing changed.
    await expect(asBob.items.add(vault.vaultId, { name: "planted", fields: { password: "x" } })).rejects.toMatchObject({ status: 403 });
    expect((await bob.items.list(vault.vaultId)).map((i) => i.name)).toEqual(["bank"]);

    const refused = await bob.emergency.refuse(made.grantId);
    expect(refused).toMatchObject({ status: "idle" });
    await expect(asBob.items.list(vault.vaultId)).rejects.toMatchObject({ status: 401 });
    await expect(carol.emergency.open(made.grantId)).rejects.toMatchObject({ status: 409 });
  });

  test("a takeover after a silent wait: a new password without the old one, every other session ended, the grant spent", async () => {
    const [bob, dave] = [await member("bob"), await member("dave")];
    const vault = await bob.vaults.create("Mine", "personal");
    await bob.items.add(vault.vaultId, { name: "bank", fields: { password: "s3cret" } });
    await acquainted(bob, dave);
    const made = await bob.emergency.grant(dave.account.userId, { level: "takeover", waitHours: 24 });
    await dave.emergency.request(made.grantId);
    // Asked: the level and wait stay as they were asked under, whoever makes the grant again.
    await expect(bob.emergency.grant(dave.account.userId, { level: "read", waitHours: 1 }, made.grantId)).rejects.toMatchObject({
      status: 409,
    });
    server.clock.advance(24 * HOUR);

    const asBob = new VaultClient({ baseUrl: server.url });
    await asBob.takeUpEmergency(await dave.emergency.open(made.grantId));
    await asBob.completeTakeover(NEW_PASSWORD);
    // Bob's own device was signed out; the new password opens the account and its items.
    await expect(bob.vaults.list()).rejects.toMatchObject({ status: 401 });
    const again = new VaultClient({ baseUrl: server.url });
    await again.login(bob.account.email, NEW_PASSWORD);
    expect((await again.items.list(vault.vaultId)).map((i) => i.fields?.password)).toEqual(["s3cret"]);
    expect((await dave.emergency.list()).received).toEqual([]);
    // Spent: the session cannot set a password without the old one a second time.
    await expect(asBob.completeTakeover("yet another horse staple battery")).rejects.toMatchObject({ status: 403 });
  });

  test("a password change leaves the grants stale until the grantor makes each again, with the level and wait signed", async () => {
    const [bob, erin] = [await member("bob"), await member("erin")];
    await acquainted(bob, erin);
    const made = await bob.emergency.grant(erin.account.userId, { level: "read", waitHours: 2 });
    const changed = await bob.changePassword(SDK_PASSWORD, NEW_PASSWORD);
    expect(changed.emergency).toEqual({ renewed: [], stale: [made.grantId] });
    expect((await erin.emergency.list()).received[0]).toMatchObject({ grantId: made.grantId, status: "stale" });
    // Stale: neither asked for nor opened.
    await expect(erin.emergency.request(made.grantId)).rejects.toMatchObject({ status: 409 });
    expect(await bob.emergency.renew(made.grantId)).toEqual({ renewed: [made.grantId], stale: [] });
    expect((await erin.emergency.list()).received[0]).toMatchObject({ status: "idle", level: "read", waitHours: 2 });
  });

  test("the grantee opens only a grantor whose keys it verified", async () => {
    const [bob, hal] = [await member("bob"), await member("hal")];
    await bob.keys.trust(hal.account.userId, await hal.keys.own(), hal.account.email);
    const made = await bob.emergency.grant(hal.account.userId, { level: "read", waitHours: 1 });
    await hal.emergency.request(made.grantId);
    server.clock.advance(HOUR);
    await expect(hal.emergency.open(made.grantId)).rejects.toMatchObject({ code: "EMERGENCY_GRANTOR_UNVERIFIED" });
    await hal.keys.trust(bob.account.userId, await bob.keys.own(), bob.account.email);
    expect(await hal.emergency.open(made.grantId)).toMatchObject({ level: "read" });
  });

  test("a stranger neither sees nor asks for a grant; the grantee may decline it", async () => {
    const [bob, frank, mallory] = [await member("bob"), await member("frank"), await member("mallory")];
    await acquainted(bob, frank);
    const made = await bob.emergency.grant(frank.account.userId, { level: "read", waitHours: 1 });
    await expect(mallory.emergency.request(made.grantId)).rejects.toMatchObject({ status: 404 });
    await expect(mallory.emergency.remove(made.grantId)).rejects.toMatchObject({ status: 404 });
    // The grantor cannot ask in the grantee's place, nor the grantee refuse in the grantor's.
    await expect(bob.emergency.request(made.grantId)).rejects.toMatchObject({ status: 404 });
    await frank.emergency.request(made.grantId);
    await expect(frank.emergency.refuse(made.grantId)).rejects.toMatchObject({ status: 404 });
    await frank.emergency.remove(made.grantId);
    expect((await bob.emergency.list()).granted).toEqual([]);
  });

  test("ten requests at once: exactly one starts the wait", async () => {
    const [bob, gina] = [await member("bob"), await member("gina")];
    await acquainted(bob, gina);
    const made = await bob.emergency.grant(gina.account.userId, { level: "read", waitHours: 1 });
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => gina.emergency.request(made.grantId)));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason.status)).toEqual(
      Array(9).fill(409),
    );
  });
});
