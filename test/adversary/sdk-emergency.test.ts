/**
 * Emergency access against a dishonest server: real SDK clients, the real service behind a proxy
 * that rewrites its answers (test/helpers/dishonest-proxy.ts). The server chooses nothing a client
 * acts on: not the key the account's key is wrapped to, not a grant's level, wait or people (the
 * grantor signed them), not the key it releases nor the account it opens with it. Each is refused
 * by name, with nothing sent or opened.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { MemoryPinStore, SecurityError, VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { dishonestSuite, type Edit } from "../helpers/dishonest-proxy";
import { generateRsaKeyPair, rsaOaepWrap } from "../../protocol/crypto/primitives";
import { fromBase64, toBase64 } from "../../protocol/encoding";

jest.setTimeout(240_000);

const HOUR = 3_600_000;
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

async function refused(attempt: Promise<unknown>, code: string): Promise<void> {
  const err = await attempt.then(
    (taken) => new Error(`it was taken: ${JSON.stringify(taken).slice(0, 80)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SecurityError);
  expect((err as SecurityError).code).toBe(code);
}

describe.each(SQL_ENGINES)("emergency access against a dishonest server, on %s", (_engine, openStore) => {
  const suite = dishonestSuite(openStore);
  let alice: VaultClient;

  beforeAll(async () => {
    alice = new VaultClient({ baseUrl: suite.proxy.url });
    await alice.register({ email: email("alice"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  });

  async function member(tag: string): Promise<VaultClient> {
    const address = email(tag);
    const { code } = await alice.invites.create(address, "member");
    const c = new VaultClient({ baseUrl: suite.proxy.url, pins: new MemoryPinStore() });
    await c.register({ email: address, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
    return c;
  }

  /** A grantor and a grantee who compared fingerprints, and a grant between them. */
  async function granted(level: "read" | "takeover" = "read", waitHours = 720) {
    const [bob, carol] = [await member("bob"), await member("carol")];
    await bob.keys.trust(carol.account.userId, await carol.keys.own(), carol.account.email);
    await carol.keys.trust(bob.account.userId, await bob.keys.own(), bob.account.email);
    const grant = await bob.emergency.grant(carol.account.userId, { level, waitHours });
    return { bob, carol, grant };
  }

  /** The listing of grants, changed for grant `grantId`. */
  const onList =
    (grantId: string, change: (g: any) => any): Edit =>
    (method, path, body, status) =>
      method === "GET" && path === "/emergency/grants" && status === 200
        ? {
            granted: body.granted.map((g: any) => (g.grantId === grantId ? change(g) : g)),
            received: body.received.map((g: any) => (g.grantId === grantId ? change(g) : g)),
          }
        : body;

  /** A released grant's session answer, changed. */
  const onSession =
    (grantId: string, change: (b: any) => any | Promise<any>): Edit =>
    (method, path, body, status) =>
      method === "POST" && path === `/emergency/grants/${grantId}/session` && status === 200 ? change(body) : body;

  test("a grantee's key the server swapped is refused, and nothing is wrapped to it", async () => {
    const [bob, carol] = [await member("bob"), await member("carol")];
    await bob.keys.trust(carol.account.userId, await carol.keys.own(), carol.account.email);
    const fake = await generateRsaKeyPair(2048);
    suite.proxy.edit = (method, path, body) =>
      method === "GET" && path === `/users/${carol.account.userId}/keys` ? { ...body, publicKey: toBase64(fake.publicKeyDer) } : body;
    suite.proxy.sent.length = 0;
    await refused(bob.emergency.grant(carol.account.userId, { level: "takeover", waitHours: 1 }), "BAD_SIGNATURE");
    // A whole bundle of the server's choosing (another member's, consistent in itself) under carol's id.
    const mallory = await member("mallory");
    let theirs: any;
    suite.proxy.edit = (method, path, body) => {
      if (method === "GET" && path === `/users/${mallory.account.userId}/keys`) theirs = body;
      return method === "GET" && path === `/users/${carol.account.userId}/keys` && theirs
        ? { ...theirs, userId: carol.account.userId }
        : body;
    };
    await bob.keys.of(mallory.account.userId).catch(() => undefined);
    await refused(bob.emergency.grant(carol.account.userId, { level: "takeover", waitHours: 1 }), "IDENTITY_MISMATCH");
    expect(suite.proxy.sent.filter((s) => s.method === "PUT" && s.path.startsWith("/emergency/grants/"))).toEqual([]);
  });

  test("a shorter wait, another level or another grantee in the listing is refused on both sides", async () => {
    const { bob, carol, grant } = await granted("read", 720);
    for (const change of [(g: any) => ({ ...g, waitHours: 1 }), (g: any) => ({ ...g, level: "takeover" })]) {
      suite.proxy.edit = onList(grant.grantId, change);
      await refused(carol.emergency.list(), "EMERGENCY_TAMPERED");
      await refused(bob.emergency.list(), "EMERGENCY_TAMPERED");
    }
    // Bob's grant to carol, as the server serves it, shown to dave as his own.
    let served: any;
    suite.proxy.edit = onList(grant.grantId, (g) => (served = g));
    await bob.emergency.list();
    const dave = await member("dave");
    await dave.keys.trust(bob.account.userId, await bob.keys.own(), bob.account.email);
    suite.proxy.edit = (method, path, body, status) =>
      method === "GET" && path === "/emergency/grants" && status === 200
        ? { ...body, received: [{ ...served, granteeId: dave.account.userId }] }
        : body;
    await refused(dave.emergency.list(), "EMERGENCY_TAMPERED");
  });

  test("a released key other than the one signed, or another account's keys, opens nothing", async () => {
    const { carol, grant } = await granted("read", 1);
    await carol.emergency.request(grant.grantId);
    suite.server.clock.advance(HOUR);
    // A key of the server's own, wrapped to carol's real key: anyone can wrap to a public key.
    const own = toBase64(await rsaOaepWrap(fromBase64(carol.account.publicKey), new Uint8Array(randomBytes(32))));
    suite.proxy.edit = onSession(grant.grantId, (b) => ({ ...b, wrappedKey: own }));
    await refused(carol.emergency.open(grant.grantId), "EMERGENCY_TAMPERED");
    // The same, with the grant's hash of the key changed to match (its signature then fails).
    suite.proxy.edit = onSession(grant.grantId, (b) => ({ ...b, wrappedKey: own, grant: { ...b.grant, wrapped: "0".repeat(64) } }));
    await refused(carol.emergency.open(grant.grantId), "EMERGENCY_TAMPERED");
    // Another member's sealed keys and id in place of the grantor's.
    const other = await member("other");
    suite.proxy.edit = onSession(grant.grantId, (b) => ({
      ...b,
      userId: other.account.userId,
      publicKey: other.account.publicKey,
      signingPublicKey: other.account.signingPublicKey,
    }));
    await refused(carol.emergency.open(grant.grantId), "EMERGENCY_TAMPERED");
    // The grantor's keys with a private key sealed under another key.
    suite.proxy.edit = onSession(grant.grantId, (b) => ({ ...b, encryptedPrivateKey: other.account.encryptedPrivateKey }));
    await refused(carol.emergency.open(grant.grantId), "EMERGENCY_TAMPERED");
    // Honest: it opens.
    suite.proxy.edit = (_m, _p, body) => body;
    expect(await carol.emergency.open(grant.grantId)).toMatchObject({ level: "read" });
  });

  test("making a grant again takes the level and wait the grantor signed, not the listing's", async () => {
    const { bob, grant } = await granted("read", 720);
    const changed = await bob.changePassword(SDK_PASSWORD, "a brand new horse staple battery");
    expect(changed.emergency).toEqual({ renewed: [], stale: [grant.grantId] });
    suite.proxy.edit = onList(grant.grantId, (g) => ({ ...g, level: "takeover", waitHours: 1 }));
    suite.proxy.sent.length = 0;
    expect(await bob.emergency.renew()).toEqual({ renewed: [], stale: [grant.grantId] });
    expect(suite.proxy.sent.filter((s) => s.method === "PUT" && s.path === `/emergency/grants/${grant.grantId}`)).toEqual([]);
    suite.proxy.edit = (_m, _p, body) => body;
    expect(await bob.emergency.renew()).toEqual({ renewed: [grant.grantId], stale: [] });
    expect((await bob.emergency.list()).granted[0]).toMatchObject({ level: "read", waitHours: 720, status: "idle" });
  });

  test("a grant revoked on this device and listed again is refused, and never made again", async () => {
    const { bob, carol, grant } = await granted("takeover", 1);
    // What the server serves of the grant while it stands, kept to replay after the revocation.
    let kept: any;
    suite.proxy.edit = onList(grant.grantId, (g) => (kept = g));
    await bob.emergency.list();
    await bob.emergency.remove(grant.grantId);
    suite.proxy.edit = (method, path, body, status) =>
      method === "GET" && path === "/emergency/grants" && status === 200 ? { ...body, granted: [{ ...kept, status: "stale" }] } : body;
    await refused(bob.emergency.list(), "EMERGENCY_TAMPERED");
    suite.proxy.sent.length = 0;
    expect(await bob.emergency.renew()).toEqual({ renewed: [], stale: [grant.grantId] });
    expect(suite.proxy.sent.filter((s) => s.method === "PUT")).toEqual([]);
    expect(carol.account.userId).toBe(kept.granteeId);
  });
});
