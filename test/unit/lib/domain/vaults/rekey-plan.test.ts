/**
 * The rekey as one plan (lib/domain/vaults/rekey-plan.ts `planRekey`): the vault as the store found it
 * under its lock in, what the rekey writes out or the named refusal. Real keys and signatures.
 */
import type { ItemId, UserId, VaultId } from "../../../../../lib/domain/ids";
import { planRekey, readsAccountVersion, type LockedForRekey, type RekeyRequest } from "../../../../../lib/domain/vaults/rekey-plan";
import { wrapUnderOldPassword } from "../../../../../lib/domain/accounts/refusals";
import { vaultNotFound } from "../../../../../lib/domain/items/refusals";
import {
  badWrapSignature,
  rekeyPastVaultLimit,
  missingFromSet,
  notInVault,
  roleMayNot,
  twiceInSet,
} from "../../../../../lib/domain/vaults/refusals";
import type { VaultSnapshot } from "../../../../../lib/domain/vaults/decisions";
import {
  b64,
  newUserKeys,
  newVaultKey,
  signWrap,
  spkiDer,
  rawEd25519,
  wrapPersonal,
  wrapShared,
  type UserKeys,
} from "../../../../helpers/crypto";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { itemBytes } from "../../../../../lib/domain/vaults/limits";

const vaultId = "9b0c2a4e-1f53-4c1e-9d1a-2f7f3a5c6b7d" as VaultId;
const [owner, admin, member, stranger] = ["owner", "admin", "member", "stranger"] as UserId[];
const item = (id: string) => ({ itemId: id as ItemId, encryptedData: "ZGF0YQ==", encryptedName: "bmFtZQ==" });
let keys: Record<string, UserKeys>;

beforeAll(async () => {
  const all = await Promise.all([owner, admin, member].map(() => newUserKeys({ rsaBits: 2048 })));
  keys = { [owner]: all[0]!, [admin]: all[1]!, [member]: all[2]! };
});

function snapshot(type: "shared" | "personal" = "shared"): VaultSnapshot {
  const ids = type === "personal" ? [owner] : [owner, admin, member];
  const roles = { [owner]: "owner", [admin]: "admin", [member]: "member" } as const;
  return {
    vault: { vaultId, orgId: "o" as never, type, name: "Team", keyVersion: 3, rekeyRequired: true, roster: null, itemLog: null },
    members: ids.map((userId) => ({
      userId,
      role: roles[userId as keyof typeof roles],
      publicKey: b64(spkiDer(keys[userId]!.rsaPublic)),
      signingPublicKey: b64(rawEd25519(keys[userId]!.edPublic)),
    })),
  };
}

/** Every current member's new wrap, signed by `signer`. */
function newKeys(snap: VaultSnapshot, signer: UserId): RekeyRequest["newKeys"] {
  const vaultKey = newVaultKey();
  return snap.members.map(({ userId }) => {
    const wrapped =
      snap.vault.type === "personal"
        ? wrapPersonal(vaultKey, keys[userId]!.stretchedKey)
        : wrapShared(vaultKey, b64(spkiDer(keys[userId]!.rsaPublic)));
    return { userId, encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys[signer]!.edPrivate)) };
  });
}

function locked(snap: VaultSnapshot, actorId: UserId, extra: Partial<LockedForRekey> = {}): LockedForRekey {
  return {
    snapshot: snap,
    actorId,
    revisions: new Map([
      ["i1", 4],
      ["i2", 1],
    ]),
    ...extra,
  };
}

describe("planRekey", () => {
  test("an owner or admin with every member's wrap and every item: the next key version, nothing signed to append", () => {
    const snap = snapshot();
    for (const actor of [owner, admin]) {
      const plan = planRekey(locked(snap, actor), { newKeys: newKeys(snap, actor), items: [item("i1"), item("i2")] });
      expect(plan).toEqual({ keyVersion: 4 });
    }
  });

  test.each([
    ["a non-member is told the vault does not exist", stranger, () => ({}), vaultNotFound()],
    ["a member may not rekey", member, () => ({}), roleMayNot("member", "rekey")],
    [
      "a member left out of newKeys",
      owner,
      (snap: VaultSnapshot) => ({ newKeys: newKeys(snap, owner).slice(0, 2) }),
      missingFromSet("member", 1, "newKeys"),
    ],
    [
      "a member twice in newKeys",
      owner,
      (snap: VaultSnapshot) => ({ newKeys: [...newKeys(snap, owner), newKeys(snap, owner)[0]!] }),
      twiceInSet("member", owner, "newKeys"),
    ],
    ["an item left out", owner, () => ({ items: [item("i1")] }), missingFromSet("item", 1, "items")],
    ["an item the vault does not hold", owner, () => ({ items: [item("i1"), item("i2"), item("i3")] }), notInVault("item", "i3", "items")],
    [
      "wraps signed by another member than the actor",
      owner,
      (snap: VaultSnapshot) => ({ newKeys: newKeys(snap, admin) }),
      badWrapSignature(),
    ],
  ])("%s", (_, actor, change, refusal) => {
    const snap = snapshot();
    const request = { newKeys: newKeys(snap, owner), items: [item("i1"), item("i2")], ...change(snap) };
    expect(outcomeOf(() => planRekey(locked(snap, actor), request))).toEqual(asRefusal(refusal));
  });

  test("a personal vault's wrap must be under the account's current password version", () => {
    const snap = snapshot("personal");
    expect(readsAccountVersion(snap)).toBe(true);
    expect(readsAccountVersion(snapshot("shared"))).toBe(false);
    const rekey = (stated: number | undefined) => ({
      newKeys: newKeys(snap, owner),
      items: [item("i1"), item("i2")],
      accountVersion: stated,
    });
    expect(outcomeOf(() => planRekey(locked(snap, owner, { accountVersion: 2 }), rekey(1)))).toEqual(asRefusal(wrapUnderOldPassword(2, 1)));
    expect(planRekey(locked(snap, owner, { accountVersion: 2 }), rekey(2))).toEqual({ keyVersion: 4 });
    expect(planRekey(locked(snap, owner, { accountVersion: 2 }), rekey(undefined))).toEqual({ keyVersion: 4 });
  });

  test("past the vault's size limit, a rekey may not grow the vault, and may keep it as it is", () => {
    const snap = snapshot();
    const limits = { maxBytes: 20, maxItems: 10 };
    const big = (id: string) => ({ ...item(id), encryptedData: "x".repeat(40) });
    const request = (items: RekeyRequest["items"]) => ({ newKeys: newKeys(snap, owner), items });
    const refused = outcomeOf(() =>
      planRekey(locked(snap, owner, { size: { limits, storedBytes: 30 } }), request([big("i1"), item("i2")])),
    );
    expect(refused).toEqual(asRefusal(rekeyPastVaultLimit(itemBytes(big("i1")) + itemBytes(item("i2")), 20)));
    expect(planRekey(locked(snap, owner, { size: { limits, storedBytes: 100 } }), request([big("i1"), item("i2")]))).toEqual({
      keyVersion: 4,
    });
  });
});
