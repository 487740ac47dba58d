/**
 * A dishonest server between a real client and the real service: a `fetch` that rewrites the
 * service's genuine answers (the member list, the roster, a vault, a key bundle) and records
 * every request the SDK sends. Each attack is caught by the SDK from the vault's signed roster
 * before it sends anything: no wrap goes to the attacker, and the error names what was wrong.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { plainShare, TEST_KDF, unsignedVault } from "../helpers/sdk";
import { linkHash } from "../../protocol/formats/roster";
import { Api, registerUser, type TestUser } from "../helpers/client";
import { signAs } from "../helpers/roster";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(60_000);

const FAST_KDF = TEST_KDF;
const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

type Edit = (method: string, path: string, body: any) => any;

interface Sent {
  method: string;
  path: string;
  body: any;
}

/** A `fetch` that lets `edit` rewrite the server's JSON answers and records what the client sends. */
function dishonest(edit: Edit, sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input));
    const path = url.pathname.replace(/^\/api\/v1/, "");
    const method = init?.method ?? "GET";
    sent.push({ method, path, body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined });
    const res = await fetch(input, init);
    const text = await res.text();
    if (!text) return new Response(null, { status: res.status, headers: res.headers });
    return new Response(JSON.stringify(edit(method, path, JSON.parse(text))), { status: res.status, headers: res.headers });
  };
}

const writes = (sent: Sent[]) => sent.filter((s) => s.method !== "GET" && !s.path.startsWith("/auth/"));

describe("SDK against a dishonest server: the signed roster", () => {
  let server: TestServer;
  let api: Api;
  let alice: VaultClient, carol: VaultClient;
  let bob: TestUser, eve: TestUser;
  const alicePins = new MemoryPinStore();
  const aliceHeads = new MemoryRosterHeadStore();

  /** Another client of alice's, sharing her pins and seen heads, behind the dishonest `edit`. */
  async function aliceBehind(edit: Edit, sent: Sent[] = []): Promise<VaultClient> {
    const c = new VaultClient({ baseUrl: server.url, pins: alicePins, rosterHeads: aliceHeads, fetch: dishonest(edit, sent) });
    await c.login(alice.account.email, PASSWORD);
    return c;
  }

  /** An invite by alice's client (a link with a binding secret), for someone who registers with the SDK. */
  const invite = async (role: "admin" | "member") => {
    const address = email(role);
    return { address, code: (await alice.invites.create(address, role)).code };
  };
  /** An invite as a plain client makes it (a bare token), for someone a plain client registers. */
  const plainInvite = async (role: "admin" | "member") => {
    const address = email(role);
    const res = await api.post("/invites", { token: alice.http.currentTokens!.accessToken, body: { email: address, role } });
    return { address, token: res.body.token as string };
  };

  beforeAll(async () => {
    server = await startTestServer();
    api = new Api(server.url);
    alice = new VaultClient({ baseUrl: server.url, pins: alicePins, rosterHeads: aliceHeads });
    await alice.register({ email: email("alice"), password: PASSWORD, orgName: "Acme", kdf: FAST_KDF, rsaBits: 2048 });
    const forCarol = await invite("admin");
    carol = new VaultClient({ baseUrl: server.url });
    await carol.register({ email: forCarol.address, password: PASSWORD, invite: forCarol.code, kdf: FAST_KDF, rsaBits: 2048 });
    // Bob and eve are registered with keys this test holds, so it can sign as them.
    const forBob = await plainInvite("member");
    bob = await registerUser(api, { inviteToken: forBob.token, email: forBob.address });
    const forEve = await plainInvite("member");
    eve = await registerUser(api, { inviteToken: forEve.token, email: forEve.address });
  });
  afterAll(() => server.stop());

  /** A signed vault of alice's with carol (admin) and bob (member), and an item. */
  async function team(): Promise<string> {
    const { vaultId } = await alice.vaults.create(`Team ${randomUUID().slice(0, 4)}`, "shared");
    await alice.members.share(vaultId, carol.account.userId, "admin");
    await alice.members.share(vaultId, bob.userId, "member");
    await alice.items.add(vaultId, { name: "db", fields: { password: "s3cret" } });
    return vaultId;
  }

  test("the honest path: every change is a link, and the roster replays to the server's member list", async () => {
    const vaultId = await team();
    await alice.members.changeRole(vaultId, bob.userId, "admin");
    await alice.members.remove(vaultId, bob.userId);
    await carol.vaults.rekey(vaultId);
    const roster = await alice.members.roster(vaultId);
    expect(roster!.links.map((l) => l.op)).toEqual(["create", "add", "add", "role", "remove", "rekey"]);
    const report = await alice.vaults.verify(vaultId);
    expect(report).toMatchObject({ ok: true, problems: [], roster: { seq: 5 } });
  });

  test("a member injected into the list at rekey time: refused, the new key wrapped for no one", async () => {
    const vaultId = await team();
    await alice.members.remove(vaultId, bob.userId);
    const sent: Sent[] = [];
    const mitm = await aliceBehind((method, path, body) => {
      if (method === "GET" && path === `/vaults/${vaultId}/members`) {
        // eve listed with a copy of carol's entry: a member the owner would otherwise wrap the new key for.
        return {
          members: [
            ...body.members,
            { ...body.members.find((m: any) => m.userId === carol.account.userId), userId: eve.userId, role: "member" },
          ],
        };
      }
      return body;
    }, sent);
    await expect(mitm.vaults.rekey(vaultId)).rejects.toMatchObject({
      name: "SecurityError",
      code: "MEMBER_LIST_MISMATCH",
      userId: eve.userId,
      message: expect.stringContaining(`${eve.userId} is not a member according to the vault's signed roster`),
    });
    expect(writes(sent)).toEqual([]);
    // What a person is shown (vaultctl vault members, the web vault's member table) is checked too.
    await expect(mitm.members.verified(vaultId)).rejects.toMatchObject({ code: "MEMBER_LIST_MISMATCH", userId: eve.userId });
    expect((await alice.members.verified(vaultId)).members.map((m) => m.userId).sort()).toEqual(
      [alice.account.userId, carol.account.userId].sort(),
    );
    // Carol listed twice: one wrap for her would be made twice, and the list is not the roster's.
    const doubled = await aliceBehind(
      (method, path, body) =>
        method === "GET" && path === `/vaults/${vaultId}/members`
          ? { members: [...body.members, ...body.members.filter((m: any) => m.userId === carol.account.userId)] }
          : body,
      sent,
    );
    await expect(doubled.vaults.rekey(vaultId)).rejects.toMatchObject({
      code: "MEMBER_LIST_MISMATCH",
      message: expect.stringMatching(/more than once/),
    });
    expect(writes(sent)).toEqual([]);
  });

  test("a removal hidden: the removed member listed with their old wrap, or the removal cut from the roster", async () => {
    const vaultId = await team();
    const bobsEntry = (await alice.members.list(vaultId)).find((m) => m.userId === bob.userId)!;
    await alice.members.remove(vaultId, bob.userId);

    const listed: Sent[] = [];
    const stillListed = await aliceBehind(
      (method, path, body) =>
        method === "GET" && path === `/vaults/${vaultId}/members` ? { members: [...body.members, bobsEntry] } : body,
      listed,
    );
    await expect(stillListed.vaults.rekey(vaultId)).rejects.toMatchObject({ code: "MEMBER_LIST_MISMATCH", userId: bob.userId });
    expect(writes(listed)).toEqual([]);

    // The removal link dropped as well: a history this client already saw past.
    const cut: Sent[] = [];
    const rolledBack = await aliceBehind((method, path, body) => {
      if (method === "GET" && path === `/vaults/${vaultId}/roster`) return { links: body.links.slice(0, -1) };
      if (method === "GET" && path === `/vaults/${vaultId}/members`) return { members: [...body.members, bobsEntry] };
      return body;
    }, cut);
    await expect(rolledBack.vaults.rekey(vaultId)).rejects.toMatchObject({
      code: "ROSTER_ROLLBACK",
      message: expect.stringMatching(/already saw link 3/),
    });
    expect(writes(cut)).toEqual([]);
  });

  test("a wrap moved from another vault: its signature verifies and it unwraps, but the roster never vouched for it here", async () => {
    const [a, b] = [await alice.vaults.create("A", "shared"), await alice.vaults.create("B", "shared")];
    const sent: Sent[] = [];
    const mitm = await aliceBehind(
      (method, path, body) =>
        method === "GET" && path === `/vaults/${b.vaultId}`
          ? { ...body, encryptedVaultKey: a.encryptedVaultKey, wrapSignature: a.wrapSignature }
          : body,
      sent,
    );
    await expect(mitm.items.add(b.vaultId, { name: "for B", fields: { pin: "1234" } })).rejects.toMatchObject({
      code: "WRAP_MISMATCH",
      message: expect.stringMatching(/not the one the vault's signed roster vouches for/),
    });
    expect(writes(sent)).toEqual([]);
  });

  test("an old head replayed after a newer one was seen", async () => {
    const vaultId = await team();
    await alice.members.roster(vaultId); // seen: create, add carol, add bob
    const sent: Sent[] = [];
    const replay = await aliceBehind((method, path, body) => {
      if (method === "GET" && path === `/vaults/${vaultId}/roster`) return { links: body.links.slice(0, 2) };
      if (method === "GET" && path === `/vaults/${vaultId}/members`)
        return { members: body.members.filter((m: any) => m.userId !== bob.userId) };
      return body;
    }, sent);
    await expect(replay.members.share(vaultId, eve.userId)).rejects.toMatchObject({ code: "ROSTER_ROLLBACK" });
    await expect(replay.vaults.rekey(vaultId)).rejects.toMatchObject({ code: "ROSTER_ROLLBACK" });
    // A client that never saw the newer head cannot tell: the limit the README states.
    const fresh = new VaultClient({
      baseUrl: server.url,
      fetch: dishonest((m, p, body) => (m === "GET" && p === `/vaults/${vaultId}/roster` ? { links: body.links.slice(0, 2) } : body), []),
    });
    await fresh.login(alice.account.email, PASSWORD);
    expect((await fresh.members.roster(vaultId))!.state.seq).toBe(1);
    expect(writes(sent)).toEqual([]);
  });

  test("a link forged, or signed by a plain member, slipped into the roster", async () => {
    const vaultId = await team();
    const links = (await alice.members.roster(vaultId))!.links;
    const head = links.at(-1)!;
    const next = {
      vaultId,
      seq: head.seq + 1,
      prev: await linkHash(head),
      op: "add" as const,
      at: new Date().toISOString(),
      keyVersion: 1,
      subjectId: eve.userId,
      role: "member" as const,
      subjectKey: "e".repeat(64),
      wraps: [{ userId: eve.userId, sha256: "e".repeat(64) }],
    };
    const bySigner = (link: unknown) => async () => {
      const sent: Sent[] = [];
      const mitm = await aliceBehind(
        (method, path, body) => (method === "GET" && path === `/vaults/${vaultId}/roster` ? { links: [...body.links, link] } : body),
        sent,
      );
      const err = await mitm.vaults.rekey(vaultId).catch((e) => e);
      expect(writes(sent)).toEqual([]);
      return err;
    };
    // Bob is a real member with a real key, but a member may not add anyone.
    const byBob = await bySigner(signAs(bob, { ...next, actorId: bob.userId }))();
    expect(byBob).toMatchObject({
      code: "ROSTER_BROKEN",
      message: expect.stringMatching(/roster link 3 .*a vault member may not add members/),
    });
    // "By alice", with a signature that is not hers.
    const forged = await bySigner({ ...signAs(eve, { ...next, actorId: alice.account.userId }) })();
    expect(forged).toMatchObject({
      code: "BAD_SIGNATURE",
      userId: alice.account.userId,
      message: expect.stringMatching(/roster link 3 .*is not signed by its actor/),
    });
  });

  test("a key bundle substituted after first contact: the pin and the roster's record both refuse it", async () => {
    const vaultId = await team();
    const impostor = {
      publicKey: eve.bundle.publicKey,
      signingPublicKey: eve.bundle.signingPublicKey,
      publicKeySignature: eve.bundle.publicKeySignature,
    };
    // Carol's own key statement does not verify over eve's keys: the server has to drop it.
    const withStatement: Edit = (method, path, body) =>
      method === "GET" && path === `/users/${carol.account.userId}/keys` ? { ...body, ...impostor } : body;
    const swap: Edit = (method, path, body) =>
      method === "GET" && path === `/users/${carol.account.userId}/keys` ? { ...body, ...impostor, keyStatement: undefined } : body;
    const sent: Sent[] = [];
    await alice.members.remove(vaultId, bob.userId);
    const kept = await aliceBehind(withStatement, sent);
    await expect(kept.vaults.rekey(vaultId)).rejects.toMatchObject({ code: "IDENTITY_MISMATCH", userId: carol.account.userId });
    const pinned = await aliceBehind(swap, sent);
    await expect(pinned.vaults.rekey(vaultId)).rejects.toMatchObject({ code: "KEY_CHANGED", userId: carol.account.userId });
    expect(writes(sent)).toEqual([]);
    // A client that never pinned carol: the roster recorded her real keys when alice added her.
    const unpinnedSent: Sent[] = [];
    const unpinned = new VaultClient({ baseUrl: server.url, fetch: dishonest(swap, unpinnedSent) });
    await unpinned.login(alice.account.email, PASSWORD);
    await expect(unpinned.vaults.rekey(vaultId)).rejects.toMatchObject({
      code: "KEY_CHANGED",
      message: expect.stringMatching(/roster recorded/),
    });
    expect(writes(unpinnedSent)).toEqual([]);
    // The honest path still works.
    await expect(alice.vaults.rekey(vaultId)).resolves.toMatchObject({ members: 2 });
  });

  test("two admins sharing on one head: the later is refused on the link's seq, signed again on the new head, and both land on one linear chain", async () => {
    const vaultId = await team();
    await alice.members.remove(vaultId, bob.userId);
    await alice.vaults.rekey(vaultId);
    // Carol's first upload waits until alice's share has landed: carol's link is then one behind.
    const answers: Array<{ status: number; field?: string }> = [];
    let first = true;
    const racing = new VaultClient({
      baseUrl: server.url,
      fetch: async (input, init) => {
        const posting = init?.method === "POST" && String(input).endsWith(`/vaults/${vaultId}/members`);
        if (posting && first) {
          first = false;
          await alice.members.share(vaultId, eve.userId, "member");
        }
        const res = await fetch(input, init);
        if (posting)
          answers.push({ status: res.status, field: res.status === 204 ? undefined : ((await res.clone().json()) as any).error.field });
        return res;
      },
    });
    await racing.login(carol.account.email, PASSWORD);
    await racing.members.share(vaultId, bob.userId, "member");
    expect(answers).toEqual([
      { status: 400, field: "rosterLink.seq" },
      { status: 204, field: undefined },
    ]);
    const roster = await alice.members.roster(vaultId);
    expect(roster!.links.map((l) => [l.seq, l.op, l.actorId])).toEqual([
      [0, "create", alice.account.userId],
      [1, "add", alice.account.userId],
      [2, "add", alice.account.userId],
      [3, "remove", alice.account.userId],
      [4, "rekey", alice.account.userId],
      [5, "add", alice.account.userId],
      [6, "add", carol.account.userId],
    ]);
    expect([...roster!.state.members.keys()].sort()).toEqual([alice.account.userId, carol.account.userId, bob.userId, eve.userId].sort());
    expect((await alice.vaults.verify(vaultId)).problems).toEqual([]);
  });

  test("a vault made without a roster is adopted by its owner with a new key for the members confirmed, then changes only with links", async () => {
    const old = await unsignedVault(alice, "Old");
    const { vaultId } = old;
    await plainShare(alice, old, carol.account.userId, "admin");
    await expect(alice.items.add(vaultId, { name: "x", fields: {} })).rejects.toMatchObject({ code: "UNSIGNED_VAULT" });
    // Nor renamed: the name would stay the server's word.
    await expect(alice.vaults.rename(vaultId, "Renamed")).rejects.toMatchObject({ code: "UNSIGNED_VAULT" });
    expect(await alice.members.roster(vaultId)).toBeNull();
    expect((await alice.vaults.verify(vaultId)).warnings.join()).toMatch(/no signed roster/);
    const everyone = {
      members: [
        { userId: alice.account.userId, role: "owner" as const },
        { userId: carol.account.userId, role: "admin" as const },
      ],
    };
    await expect(carol.members.adoptRoster(vaultId, everyone)).rejects.toMatchObject({ status: 403 });
    const before = await alice.vaults.get(vaultId);
    // The name is the server's word too until the owner confirms it in the adopt link.
    const adopted = await alice.members.adoptRoster(vaultId, { ...everyone, name: "Old" });
    expect((await alice.vaults.getChecked(vaultId)).nameCheck).toMatchObject({ status: "verified", name: "Old" });
    expect([adopted.links.map((l) => l.op), adopted.state.members.size, adopted.state.name]).toEqual([["adopt"], 2, "Old"]);
    // Adopting is a rekey: the wraps the roster vouches for are new, none the server handed out before.
    expect((await alice.vaults.get(vaultId)).keyVersion).toBe(before.keyVersion + 1);
    expect((await alice.vaults.get(vaultId)).encryptedVaultKey).not.toBe(before.encryptedVaultKey);
    await carol.members.share(vaultId, bob.userId);
    await carol.members.remove(vaultId, bob.userId);
    await carol.vaults.rekey(vaultId);
    const report = await alice.vaults.verify(vaultId);
    expect(report).toMatchObject({ ok: true, warnings: [], roster: { seq: 3 } });
    // The server now refuses a change that comes without its link.
    const res = await api.delete(`/vaults/${vaultId}/members/${carol.account.userId}`, { token: alice.http.currentTokens!.accessToken });
    expect([res.status, res.body.error.field]).toEqual([400, "rosterLink"]);
  });
});
