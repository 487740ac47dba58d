/**
 * Changing the master password, with the real SDK against the real service, on SQLite
 * and PostgreSQL: every personal vault's key is wrapped again under the new stretched key in the
 * same transaction as the new auth hash, KDF and private keys, under a compare-and-swap on the
 * account's key version; the other sessions end. A change made from an older read (another change,
 * a new personal vault, a rekey) is refused whole, so no personal vault is ever left under a
 * password nobody knows. Requests are captured from the SDK (a `fetch` that holds them) to send
 * them late, twice, altered, or at once.
 */
import { randomUUID } from "node:crypto";
import { ApiError, MemoryValues, VaultClient, type RememberedKdf } from "../../sdk";
import { deriveAccountSecrets } from "../../protocol/crypto/keys";
import { SQL_ENGINES } from "../helpers/postgres";
import { wrongCurrentPassword } from "../../lib/domain/accounts/refusals";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(180_000);

const OLD = "correct horse battery staple";
const NEW = "purple monkey dishwasher 77";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** A `fetch` that holds the password change (answering 503) and lets everything else through. */
function holding() {
  const held: Array<{ url: string; init: RequestInit }> = [];
  const fetcher: typeof fetch = async (input, init) => {
    const url = String(input);
    if (url.endsWith("/users/me/password") && init?.method === "POST") {
      held.push({ url, init: init! });
      return new Response(JSON.stringify({ error: { code: "UNAVAILABLE", message: "held by the test" } }), { status: 503 });
    }
    return fetch(input, init);
  };
  return { held, fetcher };
}

describe.each(SQL_ENGINES)("master password change, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open" });
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  const client = (opts: { fetch?: typeof fetch; kdfMemory?: MemoryValues<RememberedKdf> } = {}) =>
    new VaultClient({ baseUrl: server.url, ...opts });

  /** A user with two personal vaults (one holding an item) and a shared one, logged in. */
  async function person(tag: string) {
    const address = email(tag);
    const kdfMemory = new MemoryValues<RememberedKdf>();
    const c = client({ kdfMemory });
    await c.register({ email: address, password: OLD, kdf: TEST_KDF });
    const notes = await c.vaults.create("Notes", "personal");
    const bank = await c.vaults.create("Bank", "personal");
    await c.items.add(bank.vaultId, { name: "Bank login", fields: { password: "hunter2" } });
    const team = await c.vaults.create("Team", "shared");
    return { email: address, c, kdfMemory, personal: [notes.vaultId, bank.vaultId], team: team.vaultId };
  }

  /** Everything the password opens: every vault, and the bank item. */
  async function opensAll(
    address: string,
    password: string,
    p: { personal: string[]; team: string },
    kdfMemory?: MemoryValues<RememberedKdf>,
  ) {
    const fresh = client({ kdfMemory });
    await fresh.login(address, password);
    for (const vaultId of [...p.personal, p.team]) await fresh.vaults.open(await fresh.vaults.get(vaultId));
    const items = await fresh.items.list(p.personal[1]!);
    expect(items.map((i) => i.fields.password)).toEqual(["hunter2"]);
    return fresh;
  }

  test("the new password opens every vault; the old one is refused; other sessions end; a device that knew the old parameters takes the new ones", async () => {
    const ada = await person("ada");
    const laptop = client();
    await laptop.login(ada.email, OLD);
    const result = await ada.c.changePassword(OLD, NEW, { kdf: TEST_KDF });
    expect(result).toEqual({ accountVersion: 2, sessionsEnded: 1, vaults: 2, recovery: "none", emergency: { renewed: [], stale: [] } });
    // This client goes on, with the new key: it reads and writes its personal vaults.
    await ada.c.items.add(ada.personal[0]!, { name: "after", fields: { note: "written after the change" } });
    await expect(laptop.vaults.list()).rejects.toMatchObject({ status: 401 });
    await expect(client().login(ada.email, OLD)).rejects.toMatchObject({ status: 401 });
    // The same device's memory of the old KDF parameters: the signed, newer statement carries it over.
    await opensAll(ada.email, NEW, ada, ada.kdfMemory);
    // Each personal vault's roster holds the rewrap link, and verifies.
    for (const vaultId of ada.personal) {
      const roster = await ada.c.members.roster(vaultId);
      expect(roster!.links.at(-1)).toMatchObject({ op: "rewrap", subjectId: ada.c.account.userId });
    }
  });

  test("a dishonest answer to the change (another account version) is refused: the client keeps the keys it had and says so", async () => {
    const joe = await person("joe");
    const lying = client({
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (!String(input).endsWith("/users/me/password") || res.status !== 200) return res;
        const body = (await res.json()) as { accountVersion: number };
        return new Response(JSON.stringify({ ...body, accountVersion: body.accountVersion + 5 }), { status: 200, headers: res.headers });
      },
    });
    await lying.login(joe.email, OLD);
    const before = lying.exportStretchedKey();
    await expect(lying.changePassword(OLD, NEW, { kdf: TEST_KDF })).rejects.toMatchObject({ code: "INCONSISTENT" });
    expect(Buffer.from(lying.exportStretchedKey()).equals(Buffer.from(before))).toBe(true);
    expect(lying.account.accountVersion).toBe(1);
  });

  test("refusals leave everything as it was: the wrong current password (403, then 429), a stale version, a missing vault, a weak KDF, an old statement", async () => {
    const bob = await person("bob");
    const { held, fetcher } = holding();
    const device = client({ fetch: fetcher });
    await device.login(bob.email, OLD);
    await device.changePassword(OLD, NEW, { kdf: TEST_KDF }).catch(() => undefined);
    const body = JSON.parse(String(held[0]!.init.body));
    const token = device.http.currentTokens!.accessToken;
    const send = (changed: object) =>
      fetch(held[0]!.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ ...body, ...changed }),
      }).then(async (r) => ({ status: r.status, error: ((await r.json()) as { error: { code: string; field?: string } }).error }));

    const wrong = { currentAuthHash: Buffer.alloc(32, 7).toString("base64") };
    expect(await send(wrong)).toMatchObject({ status: 403, error: { code: "FORBIDDEN", message: wrongCurrentPassword().message } });
    expect(await send({ accountVersion: 7 })).toMatchObject({ status: 409, error: { field: "accountVersion" } });
    // Past a 32-bit integer (the column's range on PostgreSQL): a 400, never a 500.
    expect(await send({ accountVersion: 3_000_000_000 })).toMatchObject({ status: 400, error: { field: "accountVersion" } });
    expect(await send({ vaults: body.vaults.slice(1) })).toMatchObject({ status: 409, error: { field: "vaults" } });
    expect(await send({ vaults: [...body.vaults, body.vaults[0]] })).toMatchObject({ status: 400, error: { field: "vaults" } });
    expect(await send({ kdf: { ...body.kdf, iterations: 1000 } })).toMatchObject({ status: 400, error: { field: "iterations" } });
    expect(await send({ kdfStatement: { ...body.kdfStatement, version: 1 } })).toMatchObject({ status: 400 });
    const badWrap = [{ ...body.vaults[0], wrapSignature: body.vaults[1].wrapSignature }, body.vaults[1]];
    expect(await send({ vaults: badWrap })).toMatchObject({ status: 400, error: { code: "INVALID" } });
    // Guessing the current password with a stolen access token runs out.
    let last = 0;
    for (let i = 0; i < 12 && last !== 429; i++) last = (await send(wrong)).status;
    expect(last).toBe(429);
    // Nothing was changed: the old password opens everything; the new one nothing.
    await opensAll(bob.email, OLD, bob);
    await expect(client().login(bob.email, NEW)).rejects.toMatchObject({ status: 401 });
  });

  test("two changes at once: one wins, the other is 409 and wrote nothing; the winner's password opens every vault (real concurrency)", async () => {
    const cy = await person("cy");
    const bodies = [];
    for (const next of ["first new password 1234", "second new password 5678"]) {
      const { held, fetcher } = holding();
      const device = client({ fetch: fetcher });
      await device.login(cy.email, OLD);
      await device.changePassword(OLD, next, { kdf: TEST_KDF }).catch(() => undefined);
      bodies.push({ next, held: held[0]!, token: device.http.currentTokens!.accessToken });
    }
    const statuses = await Promise.all(
      bodies.map((b) =>
        fetch(b.held.url, { ...b.held.init, headers: { ...(b.held.init.headers as object), authorization: `Bearer ${b.token}` } }).then(
          (r) => r.status,
        ),
      ),
    );
    // The loser is refused by the version (409), or, when the winner ended its session first, by that (401).
    expect([...statuses].sort()).toEqual(statuses.includes(401) ? [200, 401] : [200, 409]);
    const winner = bodies[statuses.indexOf(200)]!.next;
    const loser = bodies[statuses.indexOf(200) === 0 ? 1 : 0]!.next;
    await opensAll(cy.email, winner, cy);
    await expect(client().login(cy.email, loser)).rejects.toMatchObject({ status: 401 });
    await expect(client().login(cy.email, OLD)).rejects.toMatchObject({ status: 401 });
  });

  test("a change racing a share of a shared vault from the same client: both land; the new member opens it, the new password everything (real concurrency)", async () => {
    const gil = await person("gil");
    const email = `ivy-${randomUUID().slice(0, 8)}@example.test`;
    const invite = await gil.c.invites.create(email, "member");
    const ivy = client();
    await ivy.register({ email, password: OLD, kdf: TEST_KDF, invite: invite.code });
    // A shared vault's wraps are RSA, under no password: a share and a change do not meet, whichever lands first.
    const [changed] = await Promise.all([
      gil.c.changePassword(OLD, NEW, { kdf: TEST_KDF }),
      gil.c.members.share(gil.team, ivy.account.userId),
    ]);
    expect(changed).toMatchObject({ accountVersion: 2, vaults: 2 });
    expect((await ivy.members.list(gil.team)).map((m) => m.userId)).toContain(ivy.account.userId);
    await ivy.vaults.open(await ivy.vaults.get(gil.team));
    await opensAll(gil.email, NEW, gil);
  });

  test("logins with the old password racing the change: none keeps a session (real concurrency)", async () => {
    const fay = await person("fay");
    const { kdf } = (await (await fetch(`${server.url}/auth/prelogin?email=${encodeURIComponent(fay.email)}`)).json()) as { kdf: any };
    const { authHash } = await deriveAccountSecrets(OLD, kdf);
    const login = () =>
      fetch(`${server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: fay.email, authHash: Buffer.from(authHash).toString("base64"), deviceName: "old password" }),
      }).then((r) => r.status);
    let changing = true;
    const storm = (async () => {
      const statuses: number[] = [];
      while (changing) statuses.push(...(await Promise.all([login(), login()])));
      return statuses;
    })();
    await fay.c.changePassword(OLD, NEW, { kdf: TEST_KDF });
    changing = false;
    const statuses = await storm;
    expect(statuses.length).toBeGreaterThan(0);
    // Whatever got in before the swap was ended by it; whatever came after was refused.
    expect((await fay.c.sessions.list()).map((x) => x.deviceName)).not.toContain("old password");
    expect(await login()).toBe(401);
  });

  test("a personal vault made after the change was read: the change is refused (409), and the SDK reads again and wraps it too", async () => {
    const dee = await person("dee");
    const { held, fetcher } = holding();
    const device = client({ fetch: fetcher });
    await device.login(dee.email, OLD);
    await device.changePassword(OLD, NEW, { kdf: TEST_KDF }).catch(() => undefined);
    const late = await dee.c.vaults.create("Made meanwhile", "personal");
    const stale = await fetch(held[0]!.url, {
      ...held[0]!.init,
      headers: { ...(held[0]!.init.headers as object), authorization: `Bearer ${device.http.currentTokens!.accessToken}` },
    });
    expect([stale.status, ((await stale.json()) as { error: { field: string } }).error.field]).toEqual([409, "vaults"]);
    // Through the SDK: another personal vault is made just before its first attempt lands; it reads again on the 409 and wraps that one too.
    let madeMeanwhile: string | undefined;
    const racing = client({
      fetch: async (input, init) => {
        if (String(input).endsWith("/users/me/password") && !madeMeanwhile)
          madeMeanwhile = (await dee.c.vaults.create("At once", "personal")).vaultId;
        return fetch(input, init);
      },
    });
    await racing.login(dee.email, OLD);
    expect(await racing.changePassword(OLD, NEW, { kdf: TEST_KDF })).toMatchObject({ accountVersion: 2, vaults: 4 });
    await opensAll(dee.email, NEW, { ...dee, personal: [...dee.personal, late.vaultId, madeMeanwhile!] });
  });

  test("a personal vault rekeyed, or made, under the old password after the change: refused (409), nothing stored under a key nobody holds", async () => {
    const eve = await person("eve");
    const { held, fetcher } = holding();
    const device = client({ fetch: fetcher });
    await device.login(eve.email, OLD);
    await device.changePassword(OLD, NEW, { kdf: TEST_KDF }).catch(() => undefined);
    // A rekey lands first: the held change names the old key version.
    await eve.c.vaults.rekey(eve.personal[1]!);
    const stale = await fetch(held[0]!.url, {
      ...held[0]!.init,
      headers: { ...(held[0]!.init.headers as object), authorization: `Bearer ${device.http.currentTokens!.accessToken}` },
    });
    expect(stale.status).toBe(409);
    // The change lands. A client still at the old account version (a device behind, whose session has not been refused
    // yet: a request already past the gateway, or another gateway within SESSION_CHECK_INTERVAL) cannot wrap under the old key.
    // A second process sharing this login as an earlier release saved it (no account version), holding the old key.
    const { accountVersion: _known, ...savedEarlier } = eve.c.account;
    const oldKey = eve.c.exportStretchedKey();
    await eve.c.changePassword(OLD, NEW, { kdf: TEST_KDF });
    const sharing = new VaultClient({ baseUrl: server.url, tokens: eve.c.http.currentTokens, account: savedEarlier });
    await sharing.unlockWithStretchedKey(oldKey);
    await expect(sharing.vaults.create("Old key too", "personal")).rejects.toMatchObject({ status: 409, field: "accountVersion" });
    const behind = (eve.c as unknown as { parts: { core: { accountInfo: { accountVersion?: number } } } }).parts.core.accountInfo;
    behind.accountVersion = 1;
    const refusals = [
      await eve.c.vaults.create("Old key", "personal").catch((e: unknown) => e),
      await eve.c.vaults.rekey(eve.personal[0]!).catch((e: unknown) => e),
    ];
    for (const refused of refusals) {
      expect(refused).toBeInstanceOf(ApiError);
      expect([(refused as ApiError).status, (refused as ApiError).field]).toEqual([409, "accountVersion"]);
    }
    behind.accountVersion = 2;
    const after = await opensAll(eve.email, NEW, eve);
    expect((await after.vaults.list()).filter((v) => v.vaultType === "personal")).toHaveLength(2);
  });
});
