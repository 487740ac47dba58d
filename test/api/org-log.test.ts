/**
 * The organization's signed log, against the real service on SQLite and PostgreSQL: the SDK's
 * owner adopts it at registration, each member invited by a signed invite adds their own join, and
 * a removal carries its signed link into the removal's own transaction. The server keeps the chain
 * whole under concurrency and refuses a link that is not the caller's, or that says something other
 * than what it holds; a removal whose link it refuses removes no one.
 */
import { randomUUID, sign } from "node:crypto";
import { VaultClient } from "../../sdk";
import { keyFingerprint } from "../../protocol/crypto/keys";
import { ORG_GENESIS_PREV, orgLinkHash, orgLinkSigningBytes, type OrgLink, type UnsignedOrgLink } from "../../protocol/formats/org-log";
import { Api, newOrg, type TestUser } from "../helpers/client";
import { b64 } from "../helpers/crypto";
import { SQL_ENGINES } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(180_000);

const PASSWORD = "correct horse battery staple";
const AT = "2026-11-29T00:00:00.000Z";

/** A link signed with a raw client's Ed25519 key (node:crypto), as the SDK would sign it. */
function signedBy(user: TestUser, link: UnsignedOrgLink): OrgLink {
  return { ...link, sig: b64(sign(null, Buffer.from(orgLinkSigningBytes(link)), user.keys.edPrivate)) };
}

const entryOf = async (u: TestUser, role: "owner" | "admin" | "member") => ({
  userId: u.userId,
  email: u.email,
  role,
  key: await keyFingerprint({ publicKey: u.bundle.publicKey, signingPublicKey: u.bundle.signingPublicKey }),
});

describe.each(SQL_ENGINES)("the organization's signed log, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  const logOf = async (u: TestUser) => (await api.get(`/orgs/${u.orgId}/log`, { token: u.token })).body.links as OrgLink[];
  const post = (u: TestUser, link: unknown) => api.post(`/orgs/${u.orgId}/log`, { token: u.token, body: { link } });
  const adoptBy = async (owner: TestUser, members: Awaited<ReturnType<typeof entryOf>>[]) =>
    signedBy(owner, { orgId: owner.orgId, seq: 0, prev: ORG_GENESIS_PREV, actorId: owner.userId, at: AT, op: "adopt", members });

  test("the SDK's people: the owner adopts at registration, each invitee joins by the invite signed for them, a removal is signed with it", async () => {
    const ada = new VaultClient({ baseUrl: server.url });
    await ada.register({ email: `ada-${randomUUID().slice(0, 8)}@example.test`, password: PASSWORD, kdf: TEST_KDF, orgName: "Acme" });
    const people: VaultClient[] = [];
    for (const role of ["admin", "member"] as const) {
      const email = `${role}-${randomUUID().slice(0, 8)}@example.test`;
      const person = new VaultClient({ baseUrl: server.url });
      await person.register({ email, password: PASSWORD, kdf: TEST_KDF, invite: (await ada.invites.create(email, role)).link });
      people.push(person);
    }
    const [bo, cy] = people as [VaultClient, VaultClient];
    expect((await ada.people.list()).map((m) => [m.email, m.role, m.orgLog, m.signedBy])).toEqual(
      expect.arrayContaining([
        [ada.account.email, "owner", "signed", ada.account.userId],
        [bo.account.email, "admin", "signed", ada.account.userId],
        [cy.account.email, "member", "signed", ada.account.userId],
      ]),
    );
    await bo.people.remove(cy.account.userId);
    const log = await ada.people.log();
    expect(log).toEqual({ signed: true, seq: 3, head: expect.any(String), removed: [cy.account.userId] });
    expect((await ada.people.list()).find((m) => m.userId === cy.account.userId)).toMatchObject({
      orgLog: "removed",
      removedAt: expect.any(String),
    });
  });

  test("links that are not the caller's, or not what the server holds, are refused; a log is one chain", async () => {
    const { owner, users } = await newOrg(api, ["admin", "member"]);
    const [admin, member] = users as [TestUser, TestUser];
    const all = [await entryOf(owner, "owner"), await entryOf(admin, "admin"), await entryOf(member, "member")];
    // An adoption by someone other than an owner, or naming other members or roles than the server's.
    const byAdmin = signedBy(admin, { ...(await adoptBy(owner, all)), actorId: admin.userId });
    expect((await post(admin, byAdmin)).body.error).toMatchObject({ code: "INVALID", field: "link.actorId" });
    const promoted = await adoptBy(owner, [all[0]!, all[1]!, { ...all[2]!, role: "admin" }]);
    expect((await post(owner, promoted)).body.error).toMatchObject({ code: "INVALID", field: "link.members" });
    const forgedSig = { ...(await adoptBy(owner, all)), sig: signedBy(admin, await adoptBy(owner, all)).sig };
    expect((await post(owner, forgedSig)).body.error).toMatchObject({ code: "INVALID", field: "link.sig" });
    expect(await logOf(owner)).toEqual([]);
    // The real adoption; then the same again loses (another came first), and a removal cannot come this way.
    const adopt = await adoptBy(owner, all);
    expect((await post(owner, adopt)).status).toBe(201);
    expect((await post(owner, adopt)).body.error).toMatchObject({ code: "CONFLICT", field: "link.seq" });
    const next = { orgId: owner.orgId, seq: 1, prev: await orgLinkHash(adopt), actorId: owner.userId, at: AT };
    const remove = signedBy(owner, { ...next, op: "remove", subjectId: member.userId });
    expect((await post(owner, remove)).body.error).toMatchObject({ code: "INVALID", field: "link.subjectId" });
    // A join is one's own entry.
    const joinForOther = signedBy(member, {
      ...next,
      actorId: member.userId,
      op: "join",
      subject: { ...all[1]! },
      invite: {
        inviteId: randomUUID(),
        orgId: owner.orgId,
        orgName: "Acme",
        email: admin.email,
        role: "admin",
        expiresAt: AT,
        inviterId: owner.userId,
        signature: b64(Buffer.alloc(64)),
      },
    });
    expect((await post(member, joinForOther)).body.error).toMatchObject({ code: "INVALID", field: "link.subject" });
    expect((await logOf(owner)).length).toBe(1);
  });

  test("a removal whose link the server refuses removes no one; with a good link, both land together", async () => {
    const { owner, users } = await newOrg(api, ["member", "member"]);
    const [m1, m2] = users as [TestUser, TestUser];
    const adopt = await adoptBy(owner, [await entryOf(owner, "owner"), await entryOf(m1, "member"), await entryOf(m2, "member")]);
    expect((await post(owner, adopt)).status).toBe(201);
    const next = { orgId: owner.orgId, seq: 1, prev: await orgLinkHash(adopt), actorId: owner.userId, at: AT, op: "remove" as const };
    const del = (target: TestUser, orgLink: unknown) =>
      api.delete(`/orgs/${owner.orgId}/members/${target.userId}`, { token: owner.token, body: { orgLink } });
    // The link names another person than the one removed: nothing happens.
    expect((await del(m1, signedBy(owner, { ...next, subjectId: m2.userId }))).body.error).toMatchObject({ field: "orgLink.subjectId" });
    // The link does not follow the head: nothing happens either.
    expect((await del(m1, signedBy(owner, { ...next, seq: 2, subjectId: m1.userId }))).body.error).toMatchObject({
      code: "CONFLICT",
      field: "orgLink.seq",
    });
    const members = (await api.get(`/orgs/${owner.orgId}/members`, { token: owner.token })).body.members;
    expect(members.filter((m: { removedAt?: string }) => m.removedAt).length).toBe(0);
    expect((await api.get("/users/me", { token: m1.token })).status).toBe(200);
    const good = await del(m1, signedBy(owner, { ...next, subjectId: m1.userId }));
    expect(good.status).toBe(200);
    expect((await logOf(owner)).map((l) => [l.seq, l.op, l.subjectId])).toEqual([
      [0, "adopt", undefined],
      [1, "remove", m1.userId],
    ]);
  });

  test("two adoptions at once: one lands, the other is told another came first; the log stays one chain", async () => {
    const { owner, users } = await newOrg(api, ["member"]);
    const entries = [await entryOf(owner, "owner"), await entryOf(users[0]!, "member")];
    const a = await adoptBy(owner, entries);
    const b = signedBy(owner, { ...a, at: "2026-11-29T00:00:01.000Z" });
    const answers = await Promise.all([post(owner, a), post(owner, b), post(owner, a), post(owner, b)]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    expect((await logOf(owner)).length).toBe(1);
  });
});
