/**
 * The signed roster on the server, over real HTTP: a vault created with a `create` link changes
 * membership and key only with a valid next link. Every refusal is a 400 naming the link's field
 * and leaves nothing written; a vault without a roster behaves as before. Links are built here
 * with node:crypto (test/helpers/roster.ts), independently of the SDK's WebCrypto code.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { replayRoster } from "../../protocol/formats/roster-replay";
import { Api, newOrg, rekeyBody, sharedVault, sharedVaultBody, shareBody, type TestUser } from "../helpers/client";
import { SQL_ENGINES } from "../helpers/postgres";
import { Chain, createLink, fingerprintOf, linkHashOf, memberDigestOf, signAs, wrapHash } from "../helpers/roster";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(120_000);

/** A test user as a link signer with public keys. */
const who = (u: TestUser) => ({
  userId: u.userId,
  keys: u.keys,
  publicKey: u.bundle.publicKey,
  signingPublicKey: u.bundle.signingPublicKey,
});

function flipped(sig: string): string {
  const bytes = Buffer.from(sig, "base64");
  bytes[10]! ^= 0x01;
  return bytes.toString("base64");
}

interface SignedVault {
  vaultId: string;
  vaultKey: Buffer;
  chain: Chain;
  /** The create's body, for a signed vault made here. */
  body?: ReturnType<typeof sharedVaultBody>;
}

async function signedVault(api: Api, owner: TestUser): Promise<SignedVault> {
  const vaultKey = randomBytes(32);
  const body = sharedVaultBody(vaultKey, owner, "Signed");
  const chain = new Chain(randomUUID());
  const link = createLink(chain, who(owner), body.encryptedVaultKey);
  const res = await api.post("/vaults", { token: owner.token, body: { ...body, rosterLink: link } });
  expect([res.status, res.body.vaultId]).toEqual([201, chain.vaultId]);
  chain.accept(link);
  return { vaultId: chain.vaultId, vaultKey, chain, body };
}

/** Adds `user` with a valid `add` link. */
async function addSigned(api: Api, v: SignedVault, by: TestUser, user: TestUser, role: "admin" | "member") {
  const share = shareBody(v.vaultKey, by, user, role);
  const link = v.chain.next(who(by), {
    op: "add",
    subjectId: user.userId,
    role,
    subjectKey: fingerprintOf(user.bundle),
    wraps: [{ userId: user.userId, sha256: wrapHash(share.encryptedVaultKey) }],
  });
  const res = await api.post(`/vaults/${v.vaultId}/members`, { token: by.token, body: { ...share, rosterLink: link } });
  expect(res.status).toBe(204);
  v.chain.accept(link);
  v.chain.members.set(user.userId, { userId: user.userId, role, key: fingerprintOf(user.bundle) });
}

describe("signed roster on the server", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, admin: TestUser, member: TestUser, eve: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    api = new Api(server.url);
    const org = await newOrg(api, ["admin", "member", "member"]);
    owner = org.owner;
    [admin, member, eve] = org.users as [TestUser, TestUser, TestUser];
  });
  afterAll(() => server.stop());

  const roster = async (vaultId: string, as: TestUser = owner) =>
    (await api.get(`/vaults/${vaultId}/roster`, { token: as.token })).body.links as any[];
  const memberIds = async (vaultId: string) =>
    ((await api.get(`/vaults/${vaultId}/members`, { token: owner.token })).body.members as any[])
      .map((m) => `${m.userId}:${m.role}`)
      .sort();

  /** A refused request: 400 INVALID naming `field`, and neither the chain nor the members changed. */
  async function refused(v: SignedVault, request: () => Promise<{ status: number; body: any }>, field: string) {
    const [linksBefore, membersBefore] = [await roster(v.vaultId), await memberIds(v.vaultId)];
    const res = await request();
    expect([res.status, res.body.error?.code, res.body.error?.field]).toEqual([400, "INVALID", field]);
    expect(await roster(v.vaultId)).toEqual(linksBefore);
    expect(await memberIds(v.vaultId)).toEqual(membersBefore);
  }

  test("a vault created with a create link takes the signed vault id; its chain is shown to members only", async () => {
    const v = await signedVault(api, owner);
    const links = await roster(v.vaultId);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ op: "create", seq: 0, actorId: owner.userId, vaultId: v.vaultId });
    expect(linkHashOf(links[0])).toBe(v.chain.head);
    expect((await api.get(`/vaults/${v.vaultId}/roster`, { token: eve.token })).status).toBe(404);
    expect((await api.get(`/vaults/${v.vaultId}/roster`)).status).toBe(401);
    // The same create again (a retry whose answer was lost): the id is taken.
    const again = await api.post("/vaults", {
      token: owner.token,
      body: { ...v.body!, rosterLink: createLink(new Chain(""), who(owner), v.body!.encryptedVaultKey) },
    });
    expect(again.status).toBe(409);
  });

  test("a create link that does not describe the request is refused, and no vault is made", async () => {
    const body = sharedVaultBody(randomBytes(32), owner);
    const otherWrap = sharedVaultBody(randomBytes(32), owner).encryptedVaultKey;
    const cases: Array<[string, (c: Chain) => any]> = [
      ["rosterLink.wraps", (c) => createLink(c, who(owner), otherWrap)],
      [
        "rosterLink.sig",
        (c) => ({
          ...createLink(c, who(owner), body.encryptedVaultKey),
          sig: flipped(createLink(c, who(owner), body.encryptedVaultKey).sig),
        }),
      ],
      ["rosterLink.actorId", (c) => createLink(c, who(admin), body.encryptedVaultKey)],
      ["rosterLink.vaultType", (c) => c.next(who(owner), { ...createLink(c, who(owner), body.encryptedVaultKey), vaultType: "personal" })],
      ["rosterLink.seq", (c) => c.next(who(owner), { ...createLink(c, who(owner), body.encryptedVaultKey), seq: 1 } as any)],
      ["rosterLink.extra", (c) => ({ ...createLink(c, who(owner), body.encryptedVaultKey), extra: "x" })],
      // An id not derived from the creator and their wrap: a fresh random one, as any other.
      [
        "rosterLink.vaultId",
        (c) => {
          createLink(c, who(owner), body.encryptedVaultKey);
          c.vaultId = randomUUID();
          return c.next(who(owner), { ...createLink(new Chain(""), who(owner), body.encryptedVaultKey), vaultId: c.vaultId } as any);
        },
      ],
    ];
    for (const [field, make] of cases) {
      const chain = new Chain(randomUUID());
      const res = await api.post("/vaults", { token: owner.token, body: { ...body, rosterLink: make(chain) } });
      expect([field, res.status, res.body.error?.field]).toEqual([field, 400, field]);
      expect((await api.get(`/vaults/${chain.vaultId}`, { token: owner.token })).status).toBe(404);
    }
  });

  test("add, role, remove and rekey each need the valid next link; the chain replays to the server's member set", async () => {
    const v = await signedVault(api, owner);
    await addSigned(api, v, owner, admin, "admin");
    await addSigned(api, v, admin, member, "member");

    const role = v.chain.next(who(owner), {
      op: "role",
      subjectId: member.userId,
      role: "admin",
      subjectKey: fingerprintOf(member.bundle),
      wraps: [],
    });
    expect(
      (await api.patch(`/vaults/${v.vaultId}/members/${member.userId}`, { token: owner.token, body: { role: "admin", rosterLink: role } }))
        .status,
    ).toBe(200);
    v.chain.accept(role);
    v.chain.members.set(member.userId, { userId: member.userId, role: "admin", key: fingerprintOf(member.bundle) });

    // DELETE carries its link in a JSON body.
    const remove = v.chain.next(who(owner), {
      op: "remove",
      subjectId: member.userId,
      subjectKey: fingerprintOf(member.bundle),
      wraps: [],
    });
    const removed = await api.delete(`/vaults/${v.vaultId}/members/${member.userId}`, { token: owner.token, body: { rosterLink: remove } });
    expect([removed.status, removed.body.rekeyRequired]).toEqual([200, true]);
    v.chain.accept(remove);
    v.chain.members.delete(member.userId);

    const newKey = randomBytes(32);
    const rekey = rekeyBody(newKey, admin, [owner, admin], []);
    const link = v.chain.next(who(admin), {
      op: "rekey",
      keyVersion: 2,
      memberDigest: v.chain.memberDigest(),
      wraps: rekey.newKeys
        .map((k) => ({ userId: k.userId, sha256: wrapHash(k.encryptedVaultKey) }))
        .sort((a, b) => (a.userId < b.userId ? -1 : 1)),
    });
    expect((await api.post(`/vaults/${v.vaultId}/rekey`, { token: admin.token, body: { ...rekey, rosterLink: link } })).status).toBe(204);
    v.chain.accept(link);

    const links = await roster(v.vaultId, admin);
    expect(links.map((l) => l.op)).toEqual(["create", "add", "add", "role", "remove", "rekey"]);
    const keysOf = async (userId: string) => (await api.get(`/users/${userId}/keys`, { token: owner.token })).body;
    const state = await replayRoster(v.vaultId, links, keysOf);
    expect(state!.head).toBe(v.chain.head);
    expect([...state!.members].map(([id, m]) => `${id}:${m.role}`).sort()).toEqual(await memberIds(v.vaultId));
    const vault = (await api.get(`/vaults/${v.vaultId}`, { token: owner.token })).body;
    expect([vault.keyVersion, state!.keyVersion, vault.rekeyRequired, state!.rekeyRequired]).toEqual([2, 2, false, false]);
    expect(state!.wraps.get(owner.userId)!.sha256).toBe(wrapHash(vault.encryptedVaultKey));
  });

  test("every refusal is a 400 naming the link's field and writes nothing", async () => {
    const v = await signedVault(api, owner);
    await addSigned(api, v, owner, admin, "admin");
    await addSigned(api, v, owner, member, "member");
    const share = shareBody(v.vaultKey, owner, eve, "member");
    const addLink = (fields: Record<string, unknown> = {}, by = owner) =>
      v.chain.next(who(by), {
        op: "add",
        subjectId: eve.userId,
        role: "member",
        subjectKey: fingerprintOf(eve.bundle),
        wraps: [{ userId: eve.userId, sha256: wrapHash(share.encryptedVaultKey) }],
        ...fields,
      });
    const add = (rosterLink: unknown, token = owner.token) =>
      api.post(`/vaults/${v.vaultId}/members`, { token, body: { ...share, rosterLink } });

    await refused(v, () => add(undefined), "rosterLink");
    await refused(v, () => add({ ...addLink(), sig: flipped(addLink().sig) }), "rosterLink.sig");
    await refused(v, () => add(addLink({ seq: v.chain.seq + 2 })), "rosterLink.seq");
    await refused(v, () => add(addLink({ seq: v.chain.seq })), "rosterLink.seq");
    await refused(v, () => add(addLink({ prev: "ab".repeat(32) })), "rosterLink.prev");
    // Signed by a plain member (whose key is real): the owner relays it, the actor has no right.
    await refused(v, () => add(addLink({}, member)), "rosterLink.actorId");
    // The link does not describe the request.
    await refused(v, () => add(addLink({ subjectId: admin.userId })), "rosterLink.subjectId");
    await refused(v, () => add(addLink({ role: "admin" })), "rosterLink.role");
    await refused(v, () => add(addLink({ subjectKey: fingerprintOf(member.bundle) })), "rosterLink.subjectKey");
    await refused(v, () => add(addLink({ wraps: [{ userId: eve.userId, sha256: "0".repeat(64) }] })), "rosterLink.wraps");
    await refused(v, () => add(addLink({ keyVersion: 2 })), "rosterLink.keyVersion");
    await refused(v, () => add(addLink({ op: "role" })), "rosterLink.op");
    await refused(v, () => add({ ...addLink(), vaultId: randomUUID() }), "rosterLink.sig");
    await refused(v, () => add(signAs(who(owner), { ...addLink(), vaultId: randomUUID() })), "rosterLink.vaultId");
    await refused(v, () => add({ ...addLink(), at: "yesterday" }), "rosterLink.at");
    // A plain member's own request stops at the role rule first (403), as the contract orders.
    expect((await add(addLink({}, member), member.token)).status).toBe(403);

    // Role change, removal and rekey without a link, or with a link for another change.
    const roleLink = v.chain.next(who(owner), {
      op: "role",
      subjectId: member.userId,
      role: "admin",
      subjectKey: fingerprintOf(member.bundle),
      wraps: [],
    });
    await refused(
      v,
      () => api.patch(`/vaults/${v.vaultId}/members/${member.userId}`, { token: owner.token, body: { role: "admin" } }),
      "rosterLink",
    );
    await refused(
      v,
      () =>
        api.patch(`/vaults/${v.vaultId}/members/${member.userId}`, { token: owner.token, body: { role: "member", rosterLink: roleLink } }),
      "rosterLink.role",
    );
    await refused(v, () => api.delete(`/vaults/${v.vaultId}/members/${member.userId}`, { token: owner.token }), "rosterLink");
    await refused(
      v,
      () =>
        api.delete(`/vaults/${v.vaultId}/members/${admin.userId}`, {
          token: owner.token,
          body: {
            rosterLink: v.chain.next(who(owner), {
              op: "remove",
              subjectId: member.userId,
              subjectKey: fingerprintOf(member.bundle),
              wraps: [],
            }),
          },
        }),
      "rosterLink.subjectId",
    );
    // An admin removing an admin: 403 before any link; an owner relaying the admin's signed removal of the owner: the actor lacks the right.
    const adminRemovesOwner = v.chain.next(who(admin), {
      op: "remove",
      subjectId: owner.userId,
      subjectKey: fingerprintOf(owner.bundle),
      wraps: [],
    });
    expect(
      (await api.delete(`/vaults/${v.vaultId}/members/${owner.userId}`, { token: admin.token, body: { rosterLink: adminRemovesOwner } }))
        .status,
    ).toBe(403);

    const rekey = rekeyBody(randomBytes(32), owner, [owner, admin, member], []);
    const rekeyWraps = rekey.newKeys
      .map((k) => ({ userId: k.userId, sha256: wrapHash(k.encryptedVaultKey) }))
      .sort((a, b) => (a.userId < b.userId ? -1 : 1));
    const rekeyLink = (fields: Record<string, unknown> = {}) =>
      v.chain.next(who(owner), { op: "rekey", keyVersion: 2, memberDigest: v.chain.memberDigest(), wraps: rekeyWraps, ...fields });
    const postRekey = (rosterLink: unknown) =>
      api.post(`/vaults/${v.vaultId}/rekey`, { token: owner.token, body: { ...rekey, rosterLink } });
    await refused(v, () => postRekey(undefined), "rosterLink");
    // A digest of another member set (the colluder added): a rekey the owner never meant.
    const withEve = memberDigestOf([...v.chain.members.values(), { userId: eve.userId, role: "member", key: fingerprintOf(eve.bundle) }]);
    await refused(v, () => postRekey(rekeyLink({ memberDigest: withEve })), "rosterLink.memberDigest");
    await refused(v, () => postRekey(rekeyLink({ keyVersion: 1 })), "rosterLink.keyVersion");
    await refused(v, () => postRekey(rekeyLink({ wraps: rekeyWraps.slice(1) })), "rosterLink.wraps");
    await expect(postRekey(rekeyLink())).resolves.toMatchObject({ status: 204 });
    expect((await roster(v.vaultId)).length).toBe(v.chain.seq + 2);
  });

  test("a vault without a roster behaves as before, takes no link, and an owner (only) can adopt one", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [
      [admin, "admin"],
      [member, "member"],
    ]);
    expect(await roster(vaultId)).toEqual([]);
    const v: SignedVault = { vaultId, vaultKey, chain: new Chain(vaultId) };
    const stray = v.chain.next(who(owner), { op: "remove", subjectId: member.userId, subjectKey: fingerprintOf(member.bundle), wraps: [] });
    await refused(
      v,
      () => api.delete(`/vaults/${vaultId}/members/${member.userId}`, { token: owner.token, body: { rosterLink: stray } }),
      "rosterLink",
    );

    const members = (await api.get(`/vaults/${vaultId}/members`, { token: owner.token })).body.members as any[];
    const listed = [owner, admin, member]
      .map((u) => ({ userId: u.userId, role: members.find((m) => m.userId === u.userId).role, key: fingerprintOf(u.bundle) }))
      .sort((a, b) => (a.userId < b.userId ? -1 : 1));
    // Adopting is a rekey: a new key for every member, and the adopt link vouches for those new wraps.
    const newKey = randomBytes(32);
    const rekey = rekeyBody(newKey, owner, [owner, admin, member], []);
    const adminRekey = rekeyBody(newKey, admin, [owner, admin, member], []);
    const wraps = (body: typeof rekey) =>
      body.newKeys.map((k) => ({ userId: k.userId, sha256: wrapHash(k.encryptedVaultKey) })).sort((a, b) => (a.userId < b.userId ? -1 : 1));
    const adopt = (by: TestUser, fields: Record<string, unknown> = {}) =>
      v.chain.next(who(by), {
        op: "adopt",
        keyVersion: 2,
        vaultType: "shared",
        name: "Team",
        members: listed,
        wraps: wraps(by === admin ? adminRekey : rekey),
        ...fields,
      });
    const post = (link: unknown, token = owner.token, body = rekey) =>
      api.post(`/vaults/${vaultId}/rekey`, { token, body: { ...body, keyVersion: 1, rosterLink: link } });

    // An admin may rekey, but only an owner adopts.
    expect((await post(adopt(admin), admin.token, adminRekey)).status).toBe(403);
    await refused(
      v,
      () =>
        post(
          adopt(owner, {
            members: listed.filter((m) => m.userId !== member.userId),
            wraps: wraps(rekey).filter((w) => w.userId !== member.userId),
          }),
        ),
      "rosterLink.members",
    );
    // The wraps the server holds now (the old key's), not the rekey's: refused.
    const oldWraps = members
      .map((m) => ({ userId: m.userId, sha256: wrapHash(m.encryptedVaultKey) }))
      .sort((a, b) => (a.userId < b.userId ? -1 : 1));
    await refused(v, () => post(adopt(owner, { wraps: oldWraps })), "rosterLink.wraps");
    await refused(v, () => post(adopt(owner, { keyVersion: 1 })), "rosterLink.keyVersion");
    await refused(v, () => post(adopt(owner, { name: "Another name" })), "rosterLink.name");
    expect((await api.get(`/vaults/${vaultId}`, { token: owner.token })).body.keyVersion).toBe(1);
    const link = adopt(owner);
    expect((await post(link)).status).toBe(204);
    v.chain.accept(link);
    expect(await roster(vaultId)).toHaveLength(1);
    expect((await api.get(`/vaults/${vaultId}`, { token: owner.token })).body.keyVersion).toBe(2);
    // Signed now: a change without its link is refused; adopting again is too.
    await refused(v, () => api.delete(`/vaults/${vaultId}/members/${member.userId}`, { token: owner.token }), "rosterLink");
    await refused(
      v,
      () =>
        api.post(`/vaults/${vaultId}/rekey`, {
          token: owner.token,
          body: { ...rekeyBody(randomBytes(32), owner, [owner, admin, member], []), rosterLink: adopt(owner) },
        }),
      "rosterLink.op",
    );
  });

  test("a rename of a signed vault takes its rename link: by an owner or admin, naming exactly the new name", async () => {
    const v = await signedVault(api, owner);
    await addSigned(api, v, owner, admin, "admin");
    await addSigned(api, v, owner, member, "member");
    const rename = (by: TestUser, name: string, fields: Record<string, unknown> = {}) =>
      v.chain.next(who(by), { op: "rename", name, wraps: [], ...fields });
    const patch = (name: string, link: unknown, token = owner.token) =>
      api.patch(`/vaults/${v.vaultId}`, { token, body: { name, rosterLink: link } });
    await refused(v, () => patch("Plain", undefined), "rosterLink");
    await refused(v, () => patch("Asked", rename(owner, "Signed otherwise")), "rosterLink.name");
    await refused(v, () => patch("Blank", rename(owner, "Blank", { name: " " })), "rosterLink.name");
    // A member may not rename: the role rule answers first.
    expect((await patch("By a member", rename(member, "By a member"), member.token)).status).toBe(403);
    const link = rename(admin, "Renamed by the admin");
    const res = await patch("Renamed by the admin", link, admin.token);
    expect([res.status, res.body.vaultName]).toEqual([200, "Renamed by the admin"]);
    v.chain.accept(link);
    const state = await replayRoster(
      v.vaultId,
      await roster(v.vaultId),
      async (id) => [owner, admin, member].find((u) => u.userId === id)!.bundle,
    );
    expect(state).toMatchObject({ name: "Renamed by the admin", seq: 3 });
  });

  test("a create link naming another name than the request is refused; one naming none is taken as before", async () => {
    const vaultKey = randomBytes(32);
    const body = sharedVaultBody(vaultKey, owner, "Asked name");
    const chain = new Chain(randomUUID());
    const named = createLink(chain, who(owner), body.encryptedVaultKey);
    const signedOtherwise = signAs(who(owner), { ...named, name: "Signed name" });
    const res = await api.post("/vaults", { token: owner.token, body: { ...body, rosterLink: signedOtherwise } });
    expect([res.status, res.body.error.field]).toEqual([400, "rosterLink.name"]);
    const same = signAs(who(owner), { ...named, name: "Asked name" });
    expect((await api.post("/vaults", { token: owner.token, body: { ...body, rosterLink: same } })).status).toBe(201);
  });
});

describe.each(SQL_ENGINES)("concurrent changes to one signed vault on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, admin: TestUser, users: TestUser[];
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await openDatabase();
    drop = database.drop;
    server = await startTestServer(database.env);
    api = new Api(server.url);
    const org = await newOrg(api, ["admin", ...Array.from({ length: 8 }, () => "member" as const)]);
    owner = org.owner;
    [admin, ...users] = org.users as [TestUser, ...TestUser[]];
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  test("links built on one head race: exactly one lands each round, and the chain stays linear", async () => {
    const v = await signedVault(api, owner);
    await addSigned(api, v, owner, admin, "admin");
    for (let round = 0; round < users.length / 2; round++) {
      // Two changes built on one head: the owner adds one user while the admin adds another.
      const [first, second] = [users[2 * round]!, users[2 * round + 1]!];
      const byOwner = shareBody(v.vaultKey, owner, first, "member");
      const byAdmin = shareBody(v.vaultKey, admin, second, "member");
      const link = (by: TestUser, user: TestUser, share: typeof byOwner) =>
        v.chain.next(who(by), {
          op: "add",
          subjectId: user.userId,
          role: "member",
          subjectKey: fingerprintOf(user.bundle),
          wraps: [{ userId: user.userId, sha256: wrapHash(share.encryptedVaultKey) }],
        });
      const [a, b] = [link(owner, first, byOwner), link(admin, second, byAdmin)];
      const replies = await Promise.all([
        api.post(`/vaults/${v.vaultId}/members`, { token: owner.token, body: { ...byOwner, rosterLink: a } }),
        api.post(`/vaults/${v.vaultId}/members`, { token: admin.token, body: { ...byAdmin, rosterLink: b } }),
      ]);
      const landed = replies.filter((r) => r.status === 204);
      const lost = replies.filter((r) => r.status !== 204);
      expect(landed).toHaveLength(1);
      expect(lost.map((r) => [r.status, r.body.error.field])).toEqual([[400, "rosterLink.seq"]]);
      v.chain.accept(replies[0]!.status === 204 ? a : b);
    }
    const links = (await (await api.get(`/vaults/${v.vaultId}/roster`, { token: owner.token })).body.links) as any[];
    expect(links.map((l) => l.seq)).toEqual(links.map((_, i) => i));
    for (let i = 1; i < links.length; i++) expect(links[i].prev).toBe(linkHashOf(links[i - 1]));
    const keysOf = async (userId: string) => (await api.get(`/users/${userId}/keys`, { token: owner.token })).body;
    const state = await replayRoster(v.vaultId, links, keysOf);
    const members = ((await api.get(`/vaults/${v.vaultId}/members`, { token: owner.token })).body.members as any[])
      .map((m) => `${m.userId}:${m.role}`)
      .sort();
    expect([...state!.members].map(([id, m]) => `${id}:${m.role}`).sort()).toEqual(members);
    expect(members).toHaveLength(2 + users.length / 2);
  });
});

describe("vault ids across organizations", () => {
  let server: TestServer;
  let api: Api;
  beforeAll(async () => {
    server = await startTestServer({ REGISTRATION_MODE: "open" });
    api = new Api(server.url);
  });
  afterAll(() => server.stop());

  test("7. a create naming another organization's vault id answers exactly as a fresh id not derived for the caller: nothing tells them the vault exists", async () => {
    const { owner: theirs } = await newOrg(api);
    const { owner: prober } = await newOrg(api);
    const taken = (await signedVault(api, theirs)).vaultId;
    const probe = async (vaultId: string) => {
      const body = sharedVaultBody(randomBytes(32), prober);
      const chain = new Chain("");
      const create = createLink(chain, who(prober), body.encryptedVaultKey);
      chain.vaultId = vaultId;
      const link = chain.next(who(prober), { ...create, vaultId } as any);
      const res = await api.post("/vaults", { token: prober.token, body: { ...body, rosterLink: link } });
      return [res.status, res.body];
    };
    const onTaken = await probe(taken);
    const onFresh = await probe(randomUUID());
    expect(onTaken).toEqual(onFresh);
    expect(onTaken[0]).toBe(400);
    expect((onTaken[1] as { error: { field: string } }).error.field).toBe("rosterLink.vaultId");
    // Their vault is untouched and still theirs alone.
    expect((await api.get(`/vaults/${taken}`, { token: theirs.token })).status).toBe(200);
    expect((await api.get(`/vaults/${taken}`, { token: prober.token })).status).toBe(404);
  });
});
