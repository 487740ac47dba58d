/**
 * The item-log protocol without a server: the published test vectors (README, "Signed item log"),
 * reproduced by the SDK's WebCrypto code and by the server's node:crypto code; the chain rules and
 * the reconstruction from a base link as plain functions; and the server's check of a request's
 * link (lib/domain/items/log.ts), one case per refusal.
 */
import type { UserId } from "../../../../lib/domain/ids";
import { sign } from "node:crypto";
import vectors from "../../../../protocol/vectors/item-log-vectors.json";
import { decideItemLinkStep, itemDigestOf, itemSetDigestOf, type ItemChange } from "../../../../lib/domain/items/log";
import { ed25519KeyFromSeed, signatureVerifies } from "../../../../lib/domain/accounts/keys";
import { AppError } from "../../../../lib/errors";
import {
  applyItemLink,
  applyToItems,
  expectedAfter,
  itemDigest,
  ItemLinkError,
  itemLinkBytes,
  itemLinkHash,
  itemLinkSignatureVerifies,
  itemLinkSigningBytes,
  itemSetBytes,
  itemSetDigest,
  parseItemLink,
  setAtBase,
  type ItemLink,
  type ItemLogHead,
  type ItemState,
} from "../../../../protocol/formats/item-log";
import { fromBase64 } from "../../../../protocol/encoding";

const seedKey = ed25519KeyFromSeed(Buffer.from(vectors.signingSeedHex, "hex"));
const resign = (link: Omit<ItemLink, "sig">): ItemLink => ({
  ...link,
  sig: sign(null, itemLinkSigningBytes(link), seedKey).toString("base64"),
});

const links = vectors.vectors.map((v) => parseItemLink(v.link));
const { vaultId, actorId } = links[0]!;

function headAfter(upTo: number): ItemLogHead {
  let head: ItemLogHead | null = null;
  for (const [i, link] of links.slice(0, upTo).entries()) head = applyItemLink(head, link, vectors.vectors[i]!.hash);
  return head!;
}

function refusedWith(field: string, fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ItemLinkError);
    expect((err as ItemLinkError).field).toBe(field);
    return;
  }
  throw new Error(`not refused (expected field ${field})`);
}

describe("item log test vectors", () => {
  test.each(vectors.vectors.map((v, i) => [i, v.link.op, v] as const))(
    "link %i (%s): canonical bytes, hash and signature, on both code paths",
    async (_i, _op, v) => {
      const link = parseItemLink(v.link);
      expect(Buffer.from(itemLinkBytes(link)).toString("utf8")).toBe(v.canonical);
      expect(Buffer.from(itemLinkSigningBytes(link)).toString("utf8")).toBe(`vault-item-link/v1\n${v.canonical}`);
      expect(await itemLinkHash(link)).toBe(v.hash);
      expect(sign(null, itemLinkSigningBytes(link), seedKey).toString("base64")).toBe(link.sig);
      expect(await itemLinkSignatureVerifies(link, fromBase64(vectors.signingPublicKey))).toBe(true);
      expect(signatureVerifies(Buffer.from(itemLinkSigningBytes(link)), Buffer.from(link.sig, "base64"), vectors.signingPublicKey)).toBe(
        true,
      );
    },
  );

  test("item digests and the item set digest, on both code paths; each link's prev is the hash of the one before", async () => {
    for (const item of Object.values(vectors.items)) {
      expect(Buffer.from(`${item.encryptedName}.${item.encryptedData}`).toString("utf8")).toBe(item.digestInput);
      expect(await itemDigest(item)).toBe(item.sha256);
      expect(itemDigestOf(item)).toBe(item.sha256);
    }
    const set = vectors.itemSet.members.map((m): [string, ItemState] => [m.itemId, { revision: m.revision, sha256: m.sha256 }]);
    expect(Buffer.from(itemSetBytes(set)).toString("utf8")).toBe(vectors.itemSet.canonical);
    expect(await itemSetDigest(set)).toBe(vectors.itemSet.digest);
    expect(itemSetDigestOf(set)).toBe(vectors.itemSet.digest);
    expect(await itemSetDigest([])).toBe(vectors.itemSet.emptyDigest);
    expect(links[0]!.prev).toBe("0".repeat(64));
    for (let i = 1; i < links.length; i++) expect(links[i]!.prev).toBe(vectors.vectors[i - 1]!.hash);
    // The checkpoint at seq 4 names the set the links before it leave.
    const items = new Map<string, ItemState>();
    for (const link of links.slice(0, 4)) applyToItems(items, link);
    expect(await itemSetDigest(items)).toBe(links[4]!.setDigest);
  });
});

describe("item log rules", () => {
  test("a log starts with a checkpoint at seq 0; each link follows the head (vault, seq, prev, key version, roster seq never back)", () => {
    expect(headAfter(links.length)).toMatchObject({ seq: 6, baseSeq: 4, keyVersion: 1 });
    refusedWith("op", () => applyItemLink(null, { ...links[1]!, seq: 0, prev: "0".repeat(64) }, "x"));
    refusedWith("seq", () => applyItemLink(null, { ...links[0]!, seq: 1 }, "x"));
    const head = headAfter(3);
    refusedWith("seq", () => applyItemLink(head, links[4]!, "x"));
    refusedWith("prev", () => applyItemLink(head, { ...links[3]!, prev: "f".repeat(64) }, "x"));
    refusedWith("vaultId", () => applyItemLink(head, { ...links[3]!, vaultId: "00000000-0000-4000-8000-000000000000" }, "x"));
    refusedWith("keyVersion", () => applyItemLink(head, { ...links[3]!, keyVersion: 2 }, "x"));
    expect(applyItemLink(head, { ...links[4]!, seq: 3, prev: head.head, op: "rekey", keyVersion: 2 }, "x").keyVersion).toBe(2);
    refusedWith("rosterSeq", () => applyItemLink({ ...head, rosterSeq: 3 }, { ...links[3]!, rosterSeq: 2 }, "x"));
  });

  test("the format: exactly the fields of the operation, each of its form", () => {
    const create = vectors.vectors[1]!.link;
    refusedWith("prevSha256", () => parseItemLink({ ...create, prevSha256: "a".repeat(64) }));
    refusedWith("sha256", () => parseItemLink({ ...create, sha256: undefined }));
    refusedWith("revision", () => parseItemLink({ ...create, revision: 2 }));
    refusedWith("revision", () => parseItemLink({ ...vectors.vectors[3]!.link, revision: 1 }));
    refusedWith("rosterSeq", () => parseItemLink({ ...create, rosterSeq: -1 }));
    refusedWith("op", () => parseItemLink({ ...create, op: "purge" }));
    // A restore names the revision after the one its delete removed: never 1.
    refusedWith("revision", () => parseItemLink({ ...create, op: "restore" }));
    refusedWith("itemLink", () => parseItemLink([]));
    // The audit head the signer verified (any op): both fields or neither, a seq from 1, a SHA-256.
    const claimed = vectors.vectors[6]!.link;
    expect(parseItemLink(claimed)).toMatchObject({ auditSeq: 42, auditHead: claimed.auditHead });
    refusedWith("auditHead", () => parseItemLink({ ...claimed, auditHead: undefined }));
    refusedWith("auditSeq", () => parseItemLink({ ...claimed, auditSeq: undefined }));
    refusedWith("auditSeq", () => parseItemLink({ ...claimed, auditSeq: 0 }));
    refusedWith("auditHead", () => parseItemLink({ ...claimed, auditHead: "A".repeat(64) }));
  });

  test("a restore brings back exactly what its delete removed, at the next revision; one that does not is refused", () => {
    const update = links[3]!; // item a at revision 2
    const del: ItemLink = { ...update, op: "delete", seq: 4, revision: 2, prevSha256: update.sha256 };
    delete del.sha256;
    const restore = (over: Partial<ItemLink>): ItemLink => {
      const link: ItemLink = { ...update, op: "restore", seq: 5, revision: 3, sha256: update.sha256, ...over };
      delete link.prevSha256;
      return link;
    };
    const before = links.slice(1, 4);
    expect(expectedAfter([...before, del, restore({})]).touched.get(update.itemId!)).toEqual({ revision: 3, sha256: update.sha256 });
    refusedWith("sha256", () => expectedAfter([...before, del, restore({ sha256: "f".repeat(64) })]));
    refusedWith("sha256", () => expectedAfter([...before, del, restore({ revision: 4 })]));
    // Restored into a known set: only an item that is not there.
    const items = new Map<string, ItemState>();
    applyToItems(items, restore({}));
    refusedWith("itemId", () => applyToItems(items, restore({})));
  });

  test("applied to a known set: a create of an item that exists, an update or delete of one that does not, or at another state, are refused", () => {
    const items = new Map<string, ItemState>();
    applyToItems(items, links[1]!);
    refusedWith("itemId", () => applyToItems(items, links[1]!));
    refusedWith("itemId", () => applyToItems(new Map(), links[3]!));
    refusedWith("prevSha256", () => applyToItems(items, { ...links[3]!, prevSha256: "f".repeat(64) }));
    refusedWith("revision", () => applyToItems(items, { ...links[3]!, revision: 3 }));
  });

  test("reconstruction: the set at the base from a listing and the links after it; links on one item must follow one another", () => {
    const sinceBase = links.slice(1, 4); // after the checkpoint at 0: create a, create b, update a
    const expected = expectedAfter(sinceBase);
    const a = links[1]!.itemId!;
    expect(expected.atBase.get(a)).toBeNull();
    expect(expected.touched.get(a)).toEqual({ revision: 2, sha256: links[3]!.sha256 });
    const listed = new Map<string, ItemState>([
      [a, { revision: 2, sha256: links[3]!.sha256! }],
      [links[2]!.itemId!, { revision: 1, sha256: links[2]!.sha256! }],
    ]);
    expect(setAtBase(listed, expected).size).toBe(0);
    refusedWith("prevSha256", () => expectedAfter([links[1]!, { ...links[3]!, prevSha256: "f".repeat(64) }]));
    refusedWith("prevSha256", () => expectedAfter([links[3]!, links[3]!]));
  });
});

describe("the server's check of a request's link (decideItemLinkStep)", () => {
  const actor = { userId: actorId as UserId, signingPublicKey: vectors.signingPublicKey };
  const head = headAfter(3); // after create a, create b
  const a = vectors.items;
  const update: ItemChange = {
    op: "update",
    itemId: links[1]!.itemId!,
    before: { revision: 1, sha256: a.a1.sha256 },
    after: { revision: 2, sha256: a.a2.sha256 },
  };
  const check = (link: ItemLink | undefined, over: Partial<Parameters<typeof decideItemLinkStep>[1]> = {}) =>
    decideItemLinkStep(link, {
      vaultId,
      head,
      roster: { seq: 0, hash: links[0]!.rosterHead },
      keyVersionAfter: 1,
      actor,
      change: update,
      ...over,
    });
  const refusal = (fn: () => unknown): [number, string | undefined] => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      const e = err as AppError & { code: number; data?: { field?: string } };
      return [e.code, e.data?.field];
    }
    return [200, undefined];
  };

  test("the right link is stored with the vault's new head", () => {
    expect(check(links[3]!)).toMatchObject({ head: { seq: 3, head: vectors.vectors[3]!.hash, baseSeq: 0 } });
    expect(check(undefined, { head: null })).toBeUndefined();
  });

  test.each<[string, () => unknown, number, string]>([
    ["no link on a vault with a log", () => check(undefined), 400, "itemLink"],
    ["a link on a vault without a signed roster", () => check(links[3]!, { roster: null }), 400, "itemLink"],
    ["another vault", () => check(links[3]!, { vaultId: "00000000-0000-4000-8000-000000000000" }), 400, "itemLink.vaultId"],
    ["an old head (another write landed first)", () => check(links[2]!), 409, "itemLink.seq"],
    [
      "another operation",
      () => check(links[3]!, { change: { op: "delete", itemId: update.itemId, before: update.before } }),
      400,
      "itemLink.op",
    ],
    [
      "another actor",
      () => check(links[3]!, { actor: { ...actor, userId: "00000000-0000-4000-8000-000000000001" as UserId } }),
      400,
      "itemLink.actorId",
    ],
    [
      "a signature by another key",
      () => check(links[3]!, { actor: { ...actor, signingPublicKey: Buffer.alloc(32, 9).toString("base64") } }),
      400,
      "itemLink.sig",
    ],
    ["another key version", () => check(links[3]!, { keyVersionAfter: 2 }), 400, "itemLink.keyVersion"],
    ["a roster the vault does not have yet", () => check(resign({ ...links[3]!, rosterSeq: 1 }), {}), 400, "itemLink.rosterSeq"],
    [
      "a roster the vault has moved past",
      () => check(links[3]!, { roster: { seq: 1, hash: links[0]!.rosterHead } }),
      409,
      "itemLink.rosterSeq",
    ],
    [
      "another roster link at the roster's seq",
      () => check(links[3]!, { roster: { seq: 0, hash: "f".repeat(64) } }),
      400,
      "itemLink.rosterHead",
    ],
    ["another item", () => check(links[3]!, { change: { ...update, itemId: links[2]!.itemId! } }), 400, "itemLink.itemId"],
    [
      "the item changed since (revision)",
      () => check(links[3]!, { change: { ...update, before: { ...update.before, revision: 2 } } }),
      409,
      "itemLink.revision",
    ],
    [
      "the item changed since (ciphertext)",
      () => check(links[3]!, { change: { ...update, before: { ...update.before, sha256: "f".repeat(64) } } }),
      409,
      "itemLink.prevSha256",
    ],
    [
      "another ciphertext than the request's",
      () => check(links[3]!, { change: { ...update, after: { ...update.after, sha256: "f".repeat(64) } } }),
      400,
      "itemLink.sha256",
    ],
    ["a log that has not started, with a write", () => check(links[3]!, { head: null }), 400, "itemLink.op"],
    [
      "a checkpoint naming another set",
      () => check(links[4]!, { head: headAfter(4), change: { op: "checkpoint", count: 2, setDigest: "f".repeat(64) } }),
      400,
      "itemLink.setDigest",
    ],
    [
      "a checkpoint naming another count",
      () => check(links[4]!, { head: headAfter(4), change: { op: "checkpoint", count: 3, setDigest: vectors.itemSet.digest } }),
      400,
      "itemLink.count",
    ],
  ])("%s: %s", (_what, fn, status, field) => {
    expect(refusal(fn)).toEqual([status, field]);
  });
});
