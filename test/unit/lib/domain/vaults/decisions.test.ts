/**
 * The vault decisions (lib/domain/vaults/decisions.ts), a table per decision: the snapshot the store
 * read under the vault's lock in, what to write or the named refusal out. The last owner stays, a
 * personal vault is never shared, a rekey names exactly the vault's members and items, and a
 * signed vault changes only with its next roster link. Real keys, wraps and signatures.
 */
import { randomUUID } from "node:crypto";
import type { ItemId, OrgId, UserId, VaultId } from "../../../../../lib/domain/ids";
import { vaultNotFound } from "../../../../../lib/domain/items/refusals";
import {
  addedAsOwner,
  alreadyMember,
  badWrapLength,
  badWrapSignature,
  itemChangedSinceRead,
  keyVersionMismatch,
  lastOwner,
  mayNotRemove,
  memberNotFound,
  missingFromSet,
  notInVault,
  personalNotShareable,
  personalOwnerStays,
  recipientNotFound,
  roleMayNot,
  rosterLinkMissing,
  rosterNotAdopted,
  twiceInSet,
  vaultIdNotDerived,
} from "../../../../../lib/domain/vaults/refusals";
import {
  decideAddMember,
  decideCreateRoster,
  decideRekey,
  decideRemoveMember,
  decideRename,
  decideRewrap,
  decideRoleChange,
  type Recipient,
  type VaultSnapshot,
} from "../../../../../lib/domain/vaults/decisions";
import type { RosterLink } from "../../../../../lib/domain/vaults/roster";
import type { VaultRole } from "../../../../../lib/domain/types";
import {
  b64,
  newUserKeys,
  newVaultKey,
  rawEd25519,
  signWrap,
  spkiDer,
  wrapPersonal,
  wrapShared,
  type UserKeys,
} from "../../../../helpers/crypto";
import { Chain, createLink, fingerprintOf, wrapHash } from "../../../../helpers/roster";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const vaultId = "9b0c2a4e-1f53-4c1e-9d1a-2f7f3a5c6b7d" as VaultId;
const orgId = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f" as OrgId;
const [owner, admin, member, newcomer, stranger] = Array.from({ length: 5 }, () => randomUUID() as UserId);
const ROLES: Record<string, VaultRole> = { [owner]: "owner", [admin]: "admin", [member]: "member" };
/** A vault with a signed roster: its head as stored. */
const SIGNED = { seq: 0, hash: "ab".repeat(32) };
/** Any roster link: a vault without a roster refuses one before reading it. */
const SOME_LINK = { op: "rename" } as RosterLink;
let keys: Record<string, UserKeys>;

beforeAll(async () => {
  const all = await Promise.all([owner, admin, member, newcomer].map(() => newUserKeys({ rsaBits: 2048 })));
  keys = { [owner]: all[0]!, [admin]: all[1]!, [member]: all[2]!, [newcomer]: all[3]! };
});

const publicKeys = (userId: UserId) => ({
  publicKey: b64(spkiDer(keys[userId]!.rsaPublic)),
  signingPublicKey: b64(rawEd25519(keys[userId]!.edPublic)),
});

/** A shared vault of owner, admin and member (or a personal one of its owner), at key version 3. */
function snapshot(over: Partial<VaultSnapshot["vault"]> = {}, ids: UserId[] = [owner, admin, member]): VaultSnapshot {
  const type = over.type ?? "shared";
  return {
    vault: { vaultId, orgId, type, name: "Team", keyVersion: 3, rekeyRequired: false, roster: null, itemLog: null, ...over },
    members: (type === "personal" ? [owner] : ids).map((userId) => ({ userId, role: ROLES[userId]!, ...publicKeys(userId) })),
  };
}

/** A wrap of a new vault key for `holder`, signed by `signer`. */
function wrapFor(holder: UserId, signer: UserId, type: "shared" | "personal" = "shared", vaultKey = newVaultKey()) {
  const wrapped =
    type === "personal" ? wrapPersonal(vaultKey, keys[holder]!.stretchedKey) : wrapShared(vaultKey, publicKeys(holder).publicKey);
  return { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys[signer]!.edPrivate)) };
}

/** The snapshot, made when a row runs (the keys are made in beforeAll). */
const lazy =
  (...args: Parameters<typeof snapshot>) =>
  () =>
    snapshot(...args);

const recipient = (userId: UserId, org = orgId): Recipient => ({ userId, orgId: org, ...publicKeys(userId) });

describe("decideAddMember", () => {
  type Row = [string, () => Parameters<typeof decideAddMember>, unknown];
  const add = (over: Partial<Parameters<typeof decideAddMember>[3]> = {}, snap = snapshot(), actor = owner, to = newcomer) =>
    [
      snap,
      actor,
      recipient(to),
      { role: "member", ...wrapFor(to, actor === stranger ? owner : actor), keyVersion: 3, ...over },
    ] as Parameters<typeof decideAddMember>;
  test.each<Row>([
    ["an owner adds a member to a vault without a roster: nothing to store", () => add(), "ok"],
    ["an admin adds an admin", () => add({ role: "admin" }, snapshot(), admin), "ok"],
    ["not a member of the vault: it does not exist", () => add({}, snapshot(), stranger), asRefusal(vaultNotFound())],
    ["no such recipient", () => [snapshot(), owner, null, add()[3]], asRefusal(recipientNotFound())],
    [
      "a recipient of another organization",
      () => [snapshot(), owner, recipient(newcomer, randomUUID() as OrgId), add()[3]],
      asRefusal(recipientNotFound()),
    ],
    ["a member may not add members", () => add({}, snapshot(), member), asRefusal(roleMayNot("member", "addMember"))],
    ["a personal vault is never shared", () => add({}, snapshot({ type: "personal" })), asRefusal(personalNotShareable())],
    ["added as an owner", () => add({ role: "owner" }), asRefusal(addedAsOwner())],
    [
      "a wrap of a personal vault's size for a shared vault",
      () => add(wrapFor(newcomer, owner, "personal")),
      asRefusal(badWrapLength(256, "shared")),
    ],
    ["a wrap signed by another than the caller", () => add(wrapFor(newcomer, admin)), asRefusal(badWrapSignature())],
    ["the recipient is a member already", () => add({}, snapshot(), owner, member), asRefusal(alreadyMember())],
    ["made at an older key version", () => add({ keyVersion: 2 }), asRefusal(keyVersionMismatch(3, 2))],
    ["a link for a vault without a roster", () => add({ rosterLink: SOME_LINK }), asRefusal(rosterNotAdopted("rosterLink"))],
    ["a signed vault without the link", () => add({}, snapshot({ roster: SIGNED })), asRefusal(rosterLinkMissing("rosterLink"))],
  ])("%s", (_what, args, expected) => {
    const call = args();
    expect(outcomeOf(() => decideAddMember(...call))).toEqual(expected);
    if (expected === "ok") expect(decideAddMember(...call)).toBeUndefined();
  });
});

describe("decideRemoveMember", () => {
  const twoOwners = () => {
    const snap = snapshot();
    snap.members[1]!.role = "owner";
    return snap;
  };
  test.each<[string, () => VaultSnapshot, UserId, UserId, RosterLink | undefined, unknown]>([
    ["an owner removes a member: the vault is rekeyed next", lazy(), owner, member, undefined, { rekeyRequired: true }],
    ["a member leaves", lazy(), member, member, undefined, { rekeyRequired: true }],
    ["one of two owners leaves", twoOwners, owner, owner, undefined, { rekeyRequired: true }],
    ["not a member of the vault", lazy(), stranger, member, undefined, asRefusal(vaultNotFound())],
    ["the user removed is not a member", lazy(), owner, newcomer, undefined, asRefusal(memberNotFound())],
    ["an admin removes an owner", lazy(), admin, owner, undefined, asRefusal(mayNotRemove("admin", "owner"))],
    ["a member removes an admin", lazy(), member, admin, undefined, asRefusal(mayNotRemove("member", "admin"))],
    ["the last owner leaves", lazy(), owner, owner, undefined, asRefusal(lastOwner(true))],
    ["a link for a vault without a roster", lazy(), owner, member, SOME_LINK, asRefusal(rosterNotAdopted("rosterLink"))],
    ["a signed vault without the link", lazy({ roster: SIGNED }), owner, member, undefined, asRefusal(rosterLinkMissing("rosterLink"))],
  ])("%s", (_what, snapOf, actor, target, link, expected) => {
    const snap = snapOf();
    const outcome = outcomeOf(() => decideRemoveMember(snap, actor, target, link));
    if (outcome !== "ok") return expect(outcome).toEqual(expected);
    expect(decideRemoveMember(snap, actor, target, link)).toEqual({ ...(expected as object), roster: undefined });
  });
});

describe("decideRoleChange", () => {
  test.each<[string, () => VaultSnapshot, UserId, UserId, VaultRole, RosterLink | undefined, unknown]>([
    ["an owner makes a member an admin", lazy(), owner, member, "admin", undefined, "ok"],
    ["an owner makes an admin an owner", lazy(), owner, admin, "owner", undefined, "ok"],
    ["not a member of the vault", lazy(), stranger, member, "admin", undefined, asRefusal(vaultNotFound())],
    ["the user named is not a member", lazy(), owner, newcomer, "admin", undefined, asRefusal(memberNotFound())],
    ["an admin may not change roles", lazy(), admin, member, "admin", undefined, asRefusal(roleMayNot("admin", "changeRole"))],
    [
      "the owner of a personal vault made an admin",
      lazy({ type: "personal" }),
      owner,
      owner,
      "admin",
      undefined,
      asRefusal(personalOwnerStays()),
    ],
    ["the last owner demoted", lazy(), owner, owner, "admin", undefined, asRefusal(lastOwner(false))],
    ["a link for a vault without a roster", lazy(), owner, member, "admin", SOME_LINK, asRefusal(rosterNotAdopted("rosterLink"))],
    [
      "a signed vault without the link",
      lazy({ roster: SIGNED }),
      owner,
      member,
      "admin",
      undefined,
      asRefusal(rosterLinkMissing("rosterLink")),
    ],
  ])("%s", (_what, snap, actor, target, role, link, expected) => {
    expect(outcomeOf(() => decideRoleChange(snap(), actor, target, role, link))).toEqual(expected);
  });
});

describe("decideRename", () => {
  test.each<[string, () => VaultSnapshot, UserId, RosterLink | undefined, unknown]>([
    ["an admin renames a vault without a roster", lazy(), admin, undefined, "ok"],
    ["not a member of the vault", lazy(), stranger, undefined, asRefusal(vaultNotFound())],
    ["a member may not rename", lazy(), member, undefined, asRefusal(roleMayNot("member", "rename"))],
    ["a link for a vault without a roster", lazy(), owner, SOME_LINK, asRefusal(rosterNotAdopted("rosterLink"))],
    ["a signed vault without the link", lazy({ roster: SIGNED }), owner, undefined, asRefusal(rosterLinkMissing("rosterLink"))],
  ])("%s", (_what, snap, actor, link, expected) => {
    expect(outcomeOf(() => decideRename(snap(), actor, "New name", link))).toEqual(expected);
  });
});

describe("decideRewrap", () => {
  test.each<[string, () => VaultSnapshot, () => Parameters<typeof decideRewrap>[2], unknown]>([
    ["a member's own wrap made again", lazy(), () => ({ keyVersion: 3, ...wrapFor(member, member) }), "ok"],
    [
      "a personal vault's wrap, at its size",
      lazy({ type: "personal" }),
      () => ({ keyVersion: 3, ...wrapFor(owner, owner, "personal") }),
      "ok",
    ],
    [
      "a shared wrap for a personal vault",
      lazy({ type: "personal" }),
      () => ({ keyVersion: 3, ...wrapFor(owner, owner) }),
      asRefusal(badWrapLength(40, "personal")),
    ],
    ["a wrap signed by another", lazy(), () => ({ keyVersion: 3, ...wrapFor(member, owner) }), asRefusal(badWrapSignature())],
    ["a rekey came first", lazy(), () => ({ keyVersion: 2, ...wrapFor(member, member) }), asRefusal(keyVersionMismatch(3, 2))],
    [
      "a signed vault without the link",
      lazy({ roster: SIGNED }),
      () => ({ keyVersion: 3, ...wrapFor(member, member) }),
      asRefusal(rosterLinkMissing("rosterLink")),
    ],
  ])("%s", (_what, snapOf, input, expected) => {
    const snap = snapOf();
    const actor = snap.vault.type === "personal" ? owner : member;
    expect(outcomeOf(() => decideRewrap(snap, actor, input()))).toEqual(expected);
  });
});

describe("decideRekey: exactly the vault's members and items, at the next key version", () => {
  const items = new Map([
    ["i1", 4],
    ["i2", 1],
  ]);
  const allItems = [
    { itemId: "i1" as ItemId, revision: 4 },
    { itemId: "i2" as ItemId, revision: 1 },
  ];
  /** Every member's new wrap of one new key, signed by `signer`. */
  const newKeys = (signer: UserId, holders: UserId[] = [owner, admin, member]) => {
    const vaultKey = newVaultKey();
    return holders.map((userId) => ({ userId, ...wrapFor(userId, signer, "shared", vaultKey) }));
  };
  type Input = Parameters<typeof decideRekey>[3];
  test.each<[string, UserId, () => Partial<Input>, () => VaultSnapshot, unknown]>([
    ["an owner rekeys a vault without a roster", owner, () => ({}), lazy(), "ok"],
    ["an admin rekeys", admin, () => ({ newKeys: newKeys(admin) }), lazy(), "ok"],
    ["not a member of the vault", stranger, () => ({}), lazy(), asRefusal(vaultNotFound())],
    ["a member may not rekey", member, () => ({}), lazy(), asRefusal(roleMayNot("member", "rekey"))],
    [
      "a member left out",
      owner,
      () => ({ newKeys: newKeys(owner, [owner, admin]) }),
      lazy(),
      asRefusal(missingFromSet("member", 1, "newKeys")),
    ],
    [
      "a member twice",
      owner,
      () => ({ newKeys: newKeys(owner, [owner, admin, member, member]) }),
      lazy(),
      asRefusal(twiceInSet("member", member, "newKeys")),
    ],
    [
      "a wrap for someone not in the vault",
      owner,
      () => ({ newKeys: newKeys(owner, [owner, admin, member, newcomer]) }),
      lazy(),
      asRefusal(notInVault("member", newcomer, "newKeys")),
    ],
    ["an item left out", owner, () => ({ items: allItems.slice(0, 1) }), lazy(), asRefusal(missingFromSet("item", 1, "items"))],
    [
      "an item the vault does not hold",
      owner,
      () => ({ items: [...allItems, { itemId: "i3" as ItemId }] }),
      lazy(),
      asRefusal(notInVault("item", "i3", "items")),
    ],
    ["wraps signed by another member", owner, () => ({ newKeys: newKeys(admin) }), lazy(), asRefusal(badWrapSignature())],
    [
      "a personal vault's wrap in a shared vault",
      owner,
      () => ({ newKeys: [...newKeys(owner, [admin, member]), { userId: owner, ...wrapFor(owner, owner, "personal") }] }),
      lazy(),
      asRefusal(badWrapLength(256, "shared")),
    ],
    ["made at an older key version", owner, () => ({ keyVersion: 2 }), lazy(), asRefusal(keyVersionMismatch(3, 2))],
    [
      "an item re-encrypted from an older revision",
      owner,
      () => ({ items: [{ itemId: "i1" as ItemId, revision: 3 }, allItems[1]!] }),
      lazy(),
      asRefusal(itemChangedSinceRead("i1", 4, 3)),
    ],
    [
      "a rekey link for a vault without a roster",
      owner,
      () => ({ rosterLink: { op: "rekey" } as RosterLink }),
      lazy(),
      asRefusal(rosterNotAdopted("rosterLink")),
    ],
    ["a signed vault without the link", owner, () => ({}), lazy({ roster: SIGNED }), asRefusal(rosterLinkMissing("rosterLink"))],
    [
      "an admin may rekey but not adopt a roster",
      admin,
      () => ({ newKeys: newKeys(admin), rosterLink: { op: "adopt" } as RosterLink }),
      lazy(),
      asRefusal(roleMayNot("admin", "adoptRoster")),
    ],
  ])("%s", (_what, actor, change, snapOf, expected) => {
    const snap = snapOf();
    const input: Input = { newKeys: newKeys(owner), items: allItems, keyVersion: 3, ...change() };
    expect(outcomeOf(() => decideRekey(snap, actor, items, input))).toEqual(expected);
  });

  test("an owner's adopt link, listing exactly the members and their new wraps, starts the roster", () => {
    const snap = snapshot();
    const wraps = newKeys(owner);
    const byId = <T extends { userId: string }>(list: T[]) => [...list].sort((a, b) => (a.userId < b.userId ? -1 : 1));
    const link = new Chain(vaultId).next(
      { userId: owner, keys: keys[owner]! },
      {
        op: "adopt",
        keyVersion: 4,
        vaultType: "shared",
        name: "Team",
        members: byId(snap.members.map((m) => ({ userId: m.userId, role: m.role, key: fingerprintOf(m) }))),
        wraps: byId(wraps.map((w) => ({ userId: w.userId, sha256: wrapHash(w.encryptedVaultKey) }))),
      },
    );
    expect(decideRekey(snap, owner, items, { newKeys: wraps, items: allItems, keyVersion: 3, rosterLink: link })).toMatchObject({ seq: 0 });
  });
});

describe("decideCreateRoster: a new vault's create link", () => {
  const creator = () => ({ userId: owner, keys: keys[owner]!, ...publicKeys(owner) });

  test("a create link whose vaultId is derived from the creator and their wrap: its entry, seq 0", () => {
    const { encryptedVaultKey } = wrapFor(owner, owner);
    const link = createLink(new Chain(vaultId), creator(), encryptedVaultKey);
    expect(decideCreateRoster(creator(), { vaultType: "shared", name: "Team", encryptedVaultKey }, link)).toMatchObject({ seq: 0 });
  });

  test("a create link naming any other vaultId", () => {
    const { encryptedVaultKey } = wrapFor(owner, owner);
    const derived = createLink(new Chain(vaultId), creator(), encryptedVaultKey);
    const { sig: _sig, vaultId: _derived, seq: _seq, prev: _prev, actorId: _actor, at: _at, ...fields } = derived;
    const link = new Chain(vaultId).next(creator(), fields);
    expect(link.vaultId).toBe(vaultId);
    expect(outcomeOf(() => decideCreateRoster(creator(), { vaultType: "shared", name: "Team", encryptedVaultKey }, link))).toEqual(
      asRefusal(vaultIdNotDerived()),
    );
  });
});
