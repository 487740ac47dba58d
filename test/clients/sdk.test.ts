/**
 * The SDK against the real server: three users joined by invites share a vault, one leaves, an
 * admin rekeys. Then what a dishonest server (or anyone between) could try, made real by a
 * man-in-the-middle `fetch` that edits the server's genuine answers, or by writes through the
 * real API: each is caught by the SDK.
 */
import { randomUUID } from "node:crypto";
import { ApiError, createAccountKeys, MemoryPinStore, openItem, SecurityError, VaultClient, type Tokens } from "../../sdk";
import { plainShare, TEST_KDF, unsignedVault } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { sleep } from "../helpers/wait";
import { itemDigest } from "../../protocol/formats/item-log";
import type { ItemLogs } from "../../sdk/client/item-log";

/** The fastest derivation the SDK accepts, so the suite stays fast; production defaults are Argon2id. */
const FAST_KDF = TEST_KDF;
const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** A `fetch` that lets `edit` rewrite the JSON body of the server's real answers. */
function tamperingFetch(edit: (method: string, path: string, body: any) => any): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(String(input));
    const text = await res.text();
    if (!text) return new Response(null, { status: res.status, headers: res.headers });
    const edited = edit(init?.method ?? "GET", url.pathname.replace(/^\/api\/v1/, ""), JSON.parse(text));
    return new Response(JSON.stringify(edited), { status: res.status, headers: res.headers });
  };
}

describe("SDK end to end", () => {
  let server: TestServer;
  let owner: VaultClient, bob: VaultClient, carol: VaultClient;
  const ownerPins = new MemoryPinStore();

  const client = (opts: { pins?: MemoryPinStore; fetch?: typeof fetch; onTokens?: (t: Tokens | undefined) => void } = {}) =>
    new VaultClient({ baseUrl: server.url, ...opts });

  beforeAll(async () => {
    server = await startTestServer({ ACCESS_TOKEN_TTL: "3s" });
    owner = client({ pins: ownerPins });
    await owner.register({ email: email("owner"), password: PASSWORD, orgName: "Acme", kdf: FAST_KDF, rsaBits: 2048 });
  });
  afterAll(() => server.stop());

  test("invites: create, list, check, register with one; a revoked one cannot be redeemed", async () => {
    const bobEmail = email("bob"),
      carolEmail = email("carol"),
      daveEmail = email("dave");
    const forBob = await owner.invites.create(bobEmail, "member", "1h");
    const forCarol = await owner.invites.create(carolEmail, "admin");
    const forDave = await owner.invites.create(daveEmail, "member");
    expect((await owner.invites.list()).map((i) => i.email).sort()).toEqual([bobEmail, carolEmail, daveEmail].sort());

    bob = client();
    expect(await bob.invites.redeem(forBob.link)).toMatchObject({
      orgId: owner.account.orgId,
      email: bobEmail,
      role: "member",
      verified: true,
      inviter: { userId: owner.account.userId },
    });
    await bob.register({ email: bobEmail, password: PASSWORD, invite: forBob.link, kdf: FAST_KDF, rsaBits: 2048 });
    carol = client();
    await carol.register({
      email: carolEmail,
      password: PASSWORD,
      invite: forCarol.code,
      kdf: { algorithm: "pbkdf2-sha256", iterations: 600_000 },
      rsaBits: 2048,
    });
    expect(carol.account).toMatchObject({ orgId: owner.account.orgId, role: "admin" });

    await owner.invites.revoke(forDave.inviteId);
    expect(await owner.invites.list()).toEqual([]);
    await expect(client().invites.redeem(forDave.token)).rejects.toMatchObject({ status: 400, code: "INVITE_NOT_REDEEMABLE" });
    await expect(client().invites.redeem(forBob.token)).rejects.toMatchObject({ status: 400, code: "INVITE_NOT_REDEEMABLE" });
  });

  test("a second login with the password opens the same keys; a wrong password is refused by the server", async () => {
    const again = client();
    await again.login(bob.account.email, PASSWORD);
    expect(again.account.userId).toBe(bob.account.userId);
    await expect(client().login(bob.account.email, "wrong")).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED" });
  });

  test("shared vault, items, removal and rekey: the one who left cannot open anything written after", async () => {
    const vault = await owner.vaults.create("Team", "shared");
    await owner.members.share(vault.vaultId, bob.account.userId, "member");
    await owner.members.share(vault.vaultId, carol.account.userId, "admin");

    const a = await bob.items.add(vault.vaultId, { name: "GitHub", fields: { username: "bob", password: "hunter2" } });
    const b = await carol.items.add(vault.vaultId, { name: "AWS", fields: { accessKey: "AKIA..." } });
    expect((await owner.items.list(vault.vaultId)).map((i) => i.name)).toEqual(["GitHub", "AWS"]);
    const edited = await owner.items.edit(
      vault.vaultId,
      a.itemId,
      { name: "GitHub", fields: { username: "bob", password: "rotated" } },
      { revision: a.revision },
    );
    expect(edited.revision).toBe(2);
    await expect(owner.items.edit(vault.vaultId, a.itemId, { name: "x", fields: {} }, { revision: 1 })).rejects.toMatchObject({
      status: 409,
    });
    expect((await bob.items.get(vault.vaultId, a.itemId)).fields.password).toBe("rotated");

    const keyBobHeld = await bob.vaults.open(await bob.vaults.get(vault.vaultId));
    const removal = await owner.members.remove(vault.vaultId, bob.account.userId);
    expect(removal.rekeyRequired).toBe(true);
    expect((await owner.vaults.verify(vault.vaultId)).warnings.join()).toMatch(/not been rekeyed/);

    const phases = new Set<string>();
    const result = await carol.vaults.rekey(vault.vaultId, { onProgress: (p) => phases.add(`${p.phase}:${p.done}/${p.total}`) });
    expect(result).toEqual({ keyVersion: 2, items: 2, members: 2, attempts: 1, history: 1, trash: 0 });
    expect(phases).toEqual(
      new Set(["items:0/2", "items:1/2", "items:2/2", "wraps:0/2", "wraps:1/2", "wraps:2/2", "upload:0/1", "upload:1/1"]),
    );

    const after = await owner.items.add(vault.vaultId, { name: "New DB", fields: { password: "after-rekey" } });
    await expect(bob.vaults.get(vault.vaultId)).rejects.toMatchObject({ status: 404 });
    const stored = await owner.http.request<any>("GET", `/vaults/${vault.vaultId}/items/${after.itemId}`);
    await expect(openItem(keyBobHeld, vault.vaultId, stored)).rejects.toMatchObject({ code: "TAMPERED" });
    // Nor the old items, now under the new key.
    const old = await owner.http.request<any>("GET", `/vaults/${vault.vaultId}/items/${b.itemId}`);
    await expect(openItem(keyBobHeld, vault.vaultId, old)).rejects.toMatchObject({ code: "TAMPERED" });

    // A fresh login of the owner opens everything under the new key, and the wraps verify.
    const fresh = client();
    await fresh.login(owner.account.email, PASSWORD);
    expect((await fresh.items.list(vault.vaultId)).map((i) => i.fields.password ?? i.fields.accessKey)).toEqual([
      "rotated",
      "AKIA...",
      "after-rekey",
    ]);
    const report = await fresh.vaults.verify(vault.vaultId);
    expect(report).toMatchObject({ ok: true, keyVersion: 2, problems: [], warnings: [] });
    expect(report.members.map((m) => [m.userId, m.senderId, m.ok]).sort()).toEqual(
      [
        [owner.account.userId, carol.account.userId, true],
        [carol.account.userId, carol.account.userId, true],
      ].sort(),
    );
  });

  test("two admins rekeying at once: one retries from the start after its 409 and both land", async () => {
    const vault = await owner.vaults.create("Race", "shared");
    await owner.members.share(vault.vaultId, carol.account.userId, "admin");
    for (let i = 0; i < 20; i++) await owner.items.add(vault.vaultId, { name: `item ${i}`, fields: { n: String(i) } });
    const results = await Promise.all([owner.vaults.rekey(vault.vaultId), carol.vaults.rekey(vault.vaultId)]);
    expect(results.map((r) => r.keyVersion).sort()).toEqual([2, 3]);
    expect(results.map((r) => r.attempts).sort()).toEqual([1, 2]);
    const items = await carol.items.list(vault.vaultId);
    expect(items.map((i) => i.fields.n)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  test.each(["items", "item-log", "roster"])(
    "a rekey that lands between this rekey's read of the vault and its first read of /%s: it starts again under the newer key, and calls nothing tampered",
    async (landsBefore) => {
      const vault = await owner.vaults.create("Overtaken", "shared");
      await owner.members.share(vault.vaultId, carol.account.userId, "admin");
      for (let i = 0; i < 3; i++) await owner.items.add(vault.vaultId, { name: `item ${i}`, fields: { n: String(i) } });
      let armed = false;
      const overtaken = client({
        pins: ownerPins,
        fetch: async (input, init) => {
          // The rekey's first read of that path: just before it, carol's whole rekey lands.
          const path = new URL(String(input)).pathname;
          if (armed && (init?.method ?? "GET") === "GET" && path.endsWith(`/vaults/${vault.vaultId}/${landsBefore}`)) {
            armed = false;
            expect(await carol.vaults.rekey(vault.vaultId)).toMatchObject({ keyVersion: 2, attempts: 1 });
          }
          return fetch(input, init);
        },
      });
      await overtaken.login(owner.account.email, PASSWORD);
      armed = true;
      expect(await overtaken.vaults.rekey(vault.vaultId)).toMatchObject({ keyVersion: 3, attempts: 2 });
      expect(armed).toBe(false);
      expect((await carol.items.list(vault.vaultId)).map((i) => i.fields.n)).toEqual(["0", "1", "2"]);
    },
  );

  test("an item edited between the rekey's read and its upload is kept: the rekey is refused (409) and starts again from a fresh read", async () => {
    const vault = await owner.vaults.create("Edited", "shared");
    await owner.members.share(vault.vaultId, carol.account.userId, "admin");
    const item = await owner.items.add(vault.vaultId, { name: "router", fields: { password: "old" } });
    let edits = 0;
    const editing = client({
      pins: ownerPins,
      fetch: async (input, init) => {
        // The first upload of the rekey: just before it, carol edits the item the rekey has read.
        if ((init?.method ?? "GET") === "POST" && String(input).endsWith("/rekey") && edits++ === 0) {
          await carol.items.edit(vault.vaultId, item.itemId, { name: "router", fields: { password: "new" } });
        }
        return fetch(input, init);
      },
    });
    await editing.login(owner.account.email, PASSWORD);
    const result = await editing.vaults.rekey(vault.vaultId);
    expect(result).toMatchObject({ keyVersion: 2, attempts: 2 });
    const fresh = client();
    await fresh.login(carol.account.email, PASSWORD);
    expect((await fresh.items.get(vault.vaultId, item.itemId)).fields.password).toBe("new");
  });

  test("items written while a rekey runs all end up under the final key", async () => {
    const vault = await owner.vaults.create("Busy", "shared");
    await owner.members.share(vault.vaultId, carol.account.userId, "admin");
    for (let i = 0; i < 50; i++) await owner.items.add(vault.vaultId, { name: `seed ${i}`, fields: {} });
    const writes = Promise.all(Array.from({ length: 10 }, (_, i) => carol.items.add(vault.vaultId, { name: `during ${i}`, fields: {} })));
    const [rekeyed] = await Promise.all([owner.vaults.rekey(vault.vaultId), writes]);
    expect(rekeyed.keyVersion).toBe(2);
    const fresh = client();
    await fresh.login(carol.account.email, PASSWORD);
    expect(await fresh.items.list(vault.vaultId)).toHaveLength(60);
  });

  test("personal vault: AES-KW under the stretched key, opened again after a new login", async () => {
    const vault = await bob.vaults.create("Mine", "personal");
    expect(vault.vaultType).toBe("personal");
    await bob.items.add(vault.vaultId, { name: "Bank", fields: { pin: "0000" } });
    const fresh = client();
    await fresh.login(bob.account.email, PASSWORD);
    expect((await fresh.items.list(vault.vaultId))[0]).toMatchObject({ name: "Bank", fields: { pin: "0000" } });
    await expect(fresh.vaults.rekey(vault.vaultId)).resolves.toMatchObject({ keyVersion: 2, members: 1 });
    expect((await fresh.vaults.verify(vault.vaultId)).ok).toBe(true);
  });

  describe("what a dishonest server could try", () => {
    let vaultId: string;
    beforeAll(async () => {
      vaultId = (await carol.vaults.create("Targets", "shared")).vaultId;
      await carol.members.share(vaultId, owner.account.userId, "member");
      await owner.items.add(vaultId, { name: "one", fields: { secret: "1" } });
      await owner.items.add(vaultId, { name: "two", fields: { secret: "2" } });
    });

    test("a wrap whose signature was altered is refused, and verify names it", async () => {
      const flip = (sig: string) => {
        const bytes = Buffer.from(sig, "base64");
        bytes[5]! ^= 0x40;
        return bytes.toString("base64");
      };
      const mitm = client({
        pins: ownerPins,
        fetch: tamperingFetch((method, path, body) => {
          if (method === "GET" && path === `/vaults/${vaultId}`) return { ...body, wrapSignature: flip(body.wrapSignature) };
          if (method === "GET" && path === `/vaults/${vaultId}/members`) {
            return {
              members: body.members.map((m: any) =>
                m.userId === carol.account.userId ? { ...m, wrapSignature: flip(m.wrapSignature) } : m,
              ),
            };
          }
          return body;
        }),
      });
      await mitm.login(owner.account.email, PASSWORD);
      await expect(mitm.items.list(vaultId)).rejects.toMatchObject({
        name: "SecurityError",
        code: "BAD_SIGNATURE",
        userId: carol.account.userId,
      });
      const report = await mitm.vaults.verify(vaultId);
      expect(report.ok).toBe(false);
      expect(report.members.find((m) => m.userId === carol.account.userId)!.problems.join()).toMatch(/signature does not verify/);
    });

    test("items listed under a newer key than the vault's on every read: refused as INCONSISTENT by a listing and by a rekey, not retried without end nor a 409", async () => {
      const own = await owner.vaults.create("Versions", "shared");
      await owner.items.add(own.vaultId, { name: "one", fields: { secret: "1" } });
      let listings = 0;
      const newer = (_method: string, path: string, body: any) => {
        if (path === `/vaults/${own.vaultId}/items` && Array.isArray(body?.items)) {
          listings++;
          return { ...body, items: body.items.map((i: any) => ({ ...i, keyVersion: i.keyVersion + 1 })) };
        }
        return body;
      };
      const device = client({ pins: ownerPins, fetch: tamperingFetch(newer) });
      await device.login(owner.account.email, PASSWORD);
      await expect(device.items.list(own.vaultId)).rejects.toMatchObject({ name: "SecurityError", code: "INCONSISTENT" });
      const read = listings;
      expect(read).toBeGreaterThan(0);
      await expect(device.vaults.rekey(own.vaultId, { maxAttempts: 3 })).rejects.toMatchObject({
        name: "SecurityError",
        code: "INCONSISTENT",
      });
      expect(listings).toBeGreaterThan(read);
      // Nothing was rekeyed: the vault is at its first key, and its item opens for an honest client.
      expect((await owner.vaults.get(own.vaultId)).keyVersion).toBe(1);
      expect((await owner.items.list(own.vaultId)).map((i) => i.name)).toEqual(["one"]);
    });

    test("a substituted public key: refused as changed once pinned; when new, as not the roster's key (signed vault) or as unsigned-by-the-sender", async () => {
      // A vault made by a plain client, shared by one too (an SDK refuses to share into a vault without a roster).
      const unsignedOne = await unsignedVault(carol, "Unsigned");
      await plainShare(carol, unsignedOne, owner.account.userId);
      const unsigned = unsignedOne.vaultId;
      const impostor = await createAccountKeys("attacker", {
        rsaBits: 2048,
        kdf: { algorithm: "pbkdf2-sha256", iterations: 600_000, salt: Buffer.alloc(16).toString("base64") },
      });
      // The attacker cannot sign carol's key statement over its keys, so it drops the statement.
      const substitute = (method: string, path: string, body: any) =>
        method === "GET" && path === `/users/${carol.account.userId}/keys`
          ? {
              ...body,
              keyStatement: undefined,
              publicKey: impostor.registration.publicKey,
              signingPublicKey: impostor.registration.signingPublicKey,
              publicKeySignature: impostor.registration.publicKeySignature,
            }
          : body;
      // The owner's client saw carol's real keys when it shared with her: the pin catches the change.
      const pinned = client({ pins: ownerPins, fetch: tamperingFetch(substitute) });
      await pinned.login(owner.account.email, PASSWORD);
      await expect(pinned.members.share(vaultId, carol.account.userId, "member")).rejects.toMatchObject({
        code: "KEY_CHANGED",
        userId: carol.account.userId,
      });
      await expect(pinned.items.list(vaultId)).rejects.toMatchObject({ code: "KEY_CHANGED" });
      // A client with no pins: the signed roster recorded carol's real keys, so the substitute is
      // refused as hers; on a vault without a roster, carol's wrap does not verify under it.
      const unpinned = client({ fetch: tamperingFetch(substitute) });
      await unpinned.login(owner.account.email, PASSWORD);
      await expect(unpinned.items.list(vaultId)).rejects.toMatchObject({
        code: "KEY_CHANGED",
        message: expect.stringMatching(/not the ones the vault.s signed roster recorded/),
      });
      await expect(unpinned.items.list(unsigned)).rejects.toMatchObject({ code: "BAD_SIGNATURE" });
      // Only the publicKey swapped: the bundle's self-signature fails.
      const halfSwapped = client({
        fetch: tamperingFetch((m, p, body) =>
          m === "GET" && p === `/users/${carol.account.userId}/keys` ? { ...body, publicKey: impostor.registration.publicKey } : body,
        ),
      });
      await halfSwapped.login(owner.account.email, PASSWORD);
      await expect(halfSwapped.keys.of(carol.account.userId)).rejects.toMatchObject({ code: "BAD_SIGNATURE" });
      // After checking the new fingerprint out of band, trusting it lifts the refusal.
      const keptPin = await ownerPins.get(carol.account.userId);
      const { current, pinned: was } = await pinned.keys.fingerprint(carol.account.userId);
      expect(current).not.toBe(was);
      await pinned.keys.trust(carol.account.userId, current, carol.account.email);
      await expect(pinned.keys.of(carol.account.userId)).resolves.toMatchObject({ publicKey: impostor.registration.publicKey });
      await ownerPins.set(carol.account.userId, keptPin!);
    });

    test("an item ciphertext moved onto another item, through the real API with a valid signed link, does not open", async () => {
      const [one, two] = await owner.http.request<any>("GET", `/vaults/${vaultId}/items`).then((r) => r.items);
      // A member's own client gone rogue: it signs the move, so the item log vouches for it; the associated data still refuses it.
      const logs = (owner as any).parts.items.logs as ItemLogs;
      const log = (await logs.follow(vaultId, (await owner.members.roster(vaultId))!))!;
      const itemLink = await logs.sign(
        log.head,
        {
          op: "update",
          itemId: two.itemId,
          revision: two.revision + 1,
          sha256: await itemDigest(one),
          prevSha256: await itemDigest(two),
        },
        (await owner.members.roster(vaultId))!.state,
      );
      await owner.http.request("PUT", `/vaults/${vaultId}/items/${two.itemId}`, {
        body: { encryptedData: one.encryptedData, encryptedName: one.encryptedName, itemLink },
      });
      await logs.saw(itemLink);
      await expect(owner.items.get(vaultId, two.itemId)).rejects.toMatchObject({ code: "TAMPERED" });
      await expect(carol.items.list(vaultId)).rejects.toBeInstanceOf(SecurityError);
      await expect(owner.items.get(vaultId, one.itemId)).resolves.toMatchObject({ name: "one" });
    });
  });

  test("an expired access token is refreshed on the way, and each new pair is handed to onTokens", async () => {
    const seen: Array<Tokens | undefined> = [];
    const c = client({ onTokens: (t) => void seen.push(t) });
    await c.login(carol.account.email, PASSWORD);
    expect(seen).toHaveLength(1);
    await sleep(3200);
    await expect(c.vaults.list()).resolves.toBeInstanceOf(Array);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.refreshToken).not.toBe(seen[0]!.refreshToken);
    // Concurrent requests after expiry share one refresh (a second would present a used token and end the login).
    await sleep(3200);
    await Promise.all(Array.from({ length: 5 }, () => c.vaults.list()));
    expect(seen).toHaveLength(3);
    await c.logout();
    expect(seen.at(-1)).toBeUndefined();
    await expect(c.vaults.list()).rejects.toBeInstanceOf(ApiError);
  });
});
