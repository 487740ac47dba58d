/**
 * The signed organization log without a server: its test vectors (protocol/vectors/org-log-vectors.json,
 * reproduced here from their seeds: Ed25519 signs deterministically), and the rules a replay
 * applies link by link, each refusal named by the field at fault.
 */
import vectors from "../../../../protocol/vectors/org-log-vectors.json";
import { fromBase64, toBase64, toHex } from "../../../../protocol/encoding";
import { keyFingerprint } from "../../../../protocol/crypto/keys";
import { ed25519Sign, importEd25519PrivateKey, type CryptoKey } from "../../../../protocol/crypto/primitives";
import { inviteStatementBytes } from "../../../../protocol/formats/statements";
import {
  ORG_GENESIS_PREV,
  orgLinkBytes,
  orgLinkHash,
  replayOrgLog,
  signOrgLink,
  type OrgLink,
  type OrgLogMember,
  type OrgLogState,
  type OrgSignerKeys,
  type SignedInvite,
  type UnsignedOrgLink,
} from "../../../../protocol/formats/org-log";
import { SecurityError } from "../../../../protocol/errors";

const ORG = "00000000-0000-4000-8000-0000000000aa";
const AT = "2026-11-29T00:00:00.000Z";

interface Person {
  userId: string;
  email: string;
  keys: OrgSignerKeys;
  signing: CryptoKey;
  fingerprint: string;
}

/** A person from a 32-byte seed: a real Ed25519 key, and stand-in RSA bytes (the fingerprint hashes both). */
async function person(n: number, email: string): Promise<Person> {
  const seed = Buffer.alloc(32, n);
  const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const signing = await importEd25519PrivateKey(new Uint8Array(pkcs8));
  const { createPrivateKey, createPublicKey } = await import("node:crypto");
  const raw = createPublicKey(createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }))
    .export({ format: "der", type: "spki" })
    .subarray(-32);
  const keys = { publicKey: toBase64(new Uint8Array(Buffer.alloc(32, n + 100))), signingPublicKey: toBase64(new Uint8Array(raw)) };
  return {
    userId: `00000000-0000-4000-8000-0000000000${String(n).padStart(2, "0")}`,
    email,
    keys,
    signing,
    fingerprint: await keyFingerprint(keys),
  };
}

let alice: Person, bob: Person, carol: Person, dave: Person;
const byId = new Map<string, Person>();
/** Signers as a client's trust part would hand them: the keys it knows, with `later` keys after a rotation. */
const later = new Map<string, OrgSignerKeys[]>();
const signers = {
  recorded: async (userId: string) => byId.get(userId)!.keys,
  later: async (userId: string) => later.get(userId) ?? [],
};

const member = (p: Person, role: OrgLogMember["role"]): OrgLogMember => ({ userId: p.userId, email: p.email, role, key: p.fingerprint });

async function invite(inviter: Person, email: string, role: "admin" | "member", inviteId: string): Promise<SignedInvite> {
  const statement = {
    inviteId,
    orgId: ORG,
    orgName: "Acme",
    email,
    role,
    expiresAt: "2026-12-01T00:00:00.000Z",
    inviterId: inviter.userId,
  };
  return { ...statement, signature: toBase64(await ed25519Sign(inviter.signing, inviteStatementBytes(statement))) };
}

/** Signs `fields` by `actor` as the link after `links`. */
async function next(links: OrgLink[], actor: Person, fields: Partial<UnsignedOrgLink>, signer = actor.signing): Promise<OrgLink> {
  const prev = links.length ? await orgLinkHash(links[links.length - 1]!) : ORG_GENESIS_PREV;
  return signOrgLink(
    { orgId: ORG, seq: links.length, prev, actorId: actor.userId, at: AT, op: "adopt", ...fields } as UnsignedOrgLink,
    signer,
  );
}

/** Alice adopts (owner) with bob (admin) and carol (member); dave joins by bob's invite. */
async function baseChain(): Promise<OrgLink[]> {
  const links: OrgLink[] = [];
  links.push(await next(links, alice, { op: "adopt", members: [member(alice, "owner"), member(bob, "admin"), member(carol, "member")] }));
  links.push(
    await next(links, dave, {
      op: "join",
      subject: member(dave, "member"),
      invite: await invite(bob, dave.email, "member", "00000000-0000-4000-8000-0000000000f1"),
    }),
  );
  return links;
}

async function refused(links: unknown[], code: string, field?: string): Promise<void> {
  const err = await replayOrgLog(ORG, links, signers).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SecurityError);
  expect((err as SecurityError).code).toBe(code);
  if (field) expect((err as SecurityError).message).toContain(`(${field})`);
}

beforeAll(async () => {
  [alice, bob, carol, dave] = await Promise.all([
    person(1, "alice@example.test"),
    person(2, "bob@example.test"),
    person(3, "carol@example.test"),
    person(4, "dave@example.test"),
  ]);
  for (const p of [alice, bob, carol, dave]) byId.set(p.userId, p);
});
afterEach(() => later.clear());

describe("organization log test vectors", () => {
  test("each vector's canonical bytes, hash and signature come out of its seeds", async () => {
    const links = await baseChain();
    expect(links.length).toBe(vectors.vectors.length);
    for (const [i, v] of vectors.vectors.entries()) {
      expect(links[i]).toEqual(v.link);
      expect(toHex(orgLinkBytes(links[i]!))).toBe(v.bytesHex);
      expect(await orgLinkHash(links[i]!)).toBe(v.hash);
    }
  });
});

describe("replaying an organization log", () => {
  test("adopt, then a join by an admin's invite: roles as signed, with who vouched for each", async () => {
    const state = (await replayOrgLog(ORG, await baseChain(), signers)) as OrgLogState;
    expect([...state.members.values()].map((m) => [m.email, m.role, m.signedBy])).toEqual([
      [alice.email, "owner", alice.userId],
      [bob.email, "admin", alice.userId],
      [carol.email, "member", alice.userId],
      [dave.email, "member", bob.userId],
    ]);
  });

  test("a removal by an admin: the person is gone and remembered as removed by them", async () => {
    const links = await baseChain();
    links.push(await next(links, bob, { op: "remove", subjectId: carol.userId }));
    const state = (await replayOrgLog(ORG, links, signers)) as OrgLogState;
    expect(state.members.has(carol.userId)).toBe(false);
    expect(state.removed.get(carol.userId)).toEqual({ signedBy: bob.userId, seq: 2 });
  });

  test("replayed on from a state reached before: only the new links are read", async () => {
    const links = await baseChain();
    const first = (await replayOrgLog(ORG, links.slice(0, 1), signers)) as OrgLogState;
    links.push(await next(links, alice, { op: "remove", subjectId: bob.userId }));
    const state = (await replayOrgLog(ORG, links, signers, first)) as OrgLogState;
    expect(state.seq).toBe(2);
    expect(state.removed.has(bob.userId)).toBe(true);
  });

  test("a member who rotated their keys signs with the new ones, which their key log leads to", async () => {
    const links = await baseChain();
    const rotated = await person(9, bob.email);
    later.set(bob.userId, [rotated.keys]);
    links.push(await next(links, bob, { op: "remove", subjectId: carol.userId }, rotated.signing));
    await expect(replayOrgLog(ORG, links, signers)).resolves.toBeTruthy();
    later.clear();
    await refused(links, "BAD_SIGNATURE");
  });

  test.each([
    ["a second adopt", async (l: OrgLink[]) => [...l, await next(l, alice, { op: "adopt", members: [member(alice, "owner")] })], "op"],
    [
      "an adopt by someone it does not name as owner",
      async () => [await next([], bob, { op: "adopt", members: [member(alice, "owner"), member(bob, "admin")] })],
      "actorId",
    ],
    [
      "a member named twice",
      async () => [await next([], alice, { op: "adopt", members: [member(alice, "owner"), member(alice, "owner")] })],
      "members",
    ],
    [
      "a link out of place",
      async (l: OrgLink[]) => [l[0]!, { ...(await next(l, bob, { op: "remove", subjectId: carol.userId })), seq: 5 }],
      "seq",
    ],
    ["a link after another than the one before it", async (l: OrgLink[]) => [l[0]!, { ...l[1]!, prev: "1".repeat(64) }], "prev"],
    ["an unknown field", async (l: OrgLink[]) => [{ ...l[0]!, extra: 1 }], "extra"],
    [
      "a member removing an admin",
      async (l: OrgLink[]) => [...l, await next(l, carol, { op: "remove", subjectId: bob.userId })],
      "actorId",
    ],
    [
      "an admin removing an owner",
      async (l: OrgLink[]) => [...l, await next(l, bob, { op: "remove", subjectId: alice.userId })],
      "actorId",
    ],
    [
      "the last owner leaving",
      async (l: OrgLink[]) => [...l, await next(l, alice, { op: "remove", subjectId: alice.userId })],
      "subjectId",
    ],
    [
      "a join by a member's invite",
      async (l: OrgLink[]) => [
        l[0]!,
        await next([l[0]!], dave, {
          op: "join",
          subject: member(dave, "member"),
          invite: await invite(carol, dave.email, "member", "00000000-0000-4000-8000-0000000000f2"),
        }),
      ],
      "invite.inviterId",
    ],
    [
      "a join with a role other than the invite's",
      async (l: OrgLink[]) => [
        l[0]!,
        await next([l[0]!], dave, {
          op: "join",
          subject: member(dave, "admin"),
          invite: await invite(bob, dave.email, "member", "00000000-0000-4000-8000-0000000000f3"),
        }),
      ],
      "invite",
    ],
    [
      "an invite that joined someone already",
      async (l: OrgLink[]) => {
        const again = { ...l[1]!.invite!, email: "eve@example.test" };
        const eve = await person(5, "eve@example.test");
        byId.set(eve.userId, eve);
        return [...l, await next(l, eve, { op: "join", subject: member(eve, "member"), invite: again })];
      },
      "invite.inviteId",
    ],
    [
      "a join signed by someone else than the joiner",
      async (l: OrgLink[]) => [l[0]!, await next([l[0]!], bob, { op: "join", subject: member(dave, "member"), invite: l[1]!.invite })],
      "subject",
    ],
  ])("refused: %s (ORG_LOG_BROKEN, naming the field)", async (_name, build, field) => {
    await refused(await build(await baseChain()), "ORG_LOG_BROKEN", field);
  });

  test("refused: an invite its inviter did not sign (BAD_SIGNATURE), a link altered after signing, keys other than the recorded ones (KEY_CHANGED)", async () => {
    const links = await baseChain();
    const forged = { ...links[1]!.invite!, signature: toBase64(await ed25519Sign(dave.signing, fromBase64(toBase64(new Uint8Array(8))))) };
    await refused(
      [links[0]!, await next([links[0]!], dave, { op: "join", subject: member(dave, "member"), invite: forged })],
      "BAD_SIGNATURE",
    );
    await refused([{ ...links[0]!, members: [member(alice, "owner"), member(bob, "owner"), member(carol, "member")] }], "BAD_SIGNATURE");
    const other = await person(7, alice.email);
    byId.set(alice.userId, { ...alice, keys: other.keys });
    try {
      await refused(links, "KEY_CHANGED");
    } finally {
      byId.set(alice.userId, alice);
    }
  });
});
