/**
 * Creates decided as one group (lib/domain/items/creates.ts): each against the vault as the ones
 * accepted before it left it (its limits, the ids taken, the item log's head), each refusal its own.
 * The links are the published item-log test vectors (protocol/vectors/item-log-vectors.json).
 */
import type { UserId } from "../../../../../lib/domain/ids";
import {
  decideGroupedCreates,
  planItemCreate,
  type GroupedCreate,
  type LockedForCreate,
  type LockedForCreates,
} from "../../../../../lib/domain/items/creates";
import { itemIdInTrash, itemIdTaken, itemLinkMissing, vaultNotFound } from "../../../../../lib/domain/items/refusals";
import { keyVersionMismatch, vaultBytesFull, vaultItemsFull } from "../../../../../lib/domain/vaults/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { itemBytes } from "../../../../../lib/domain/vaults/limits";
import { applyItemLink, parseItemLink, type ItemLogHead } from "../../../../../protocol/formats/item-log";
import vectors from "../../../../../protocol/vectors/item-log-vectors.json";

const links = vectors.vectors.map((v) => parseItemLink(v.link));
const { vaultId, actorId } = links[0]!;
const owner = actorId as UserId;
const stranger = "00000000-0000-4000-8000-000000000009" as UserId;
const { a1, b1 } = vectors.items;
const write = (i: { encryptedName: string; encryptedData: string }) => ({ encryptedName: i.encryptedName, encryptedData: i.encryptedData });
const ROOMY = { maxItems: 1000, maxBytes: 1 << 20 };

function headAfter(upTo: number): ItemLogHead {
  let head: ItemLogHead | null = null;
  for (const [i, link] of links.slice(0, upTo).entries()) head = applyItemLink(head, link, vectors.vectors[i]!.hash);
  return head!;
}

const locked = (over: Partial<LockedForCreates> = {}): LockedForCreates => ({
  vaultId,
  keyVersion: 1,
  itemLog: null,
  roster: null,
  firm: { items: 0, bytes: 0 },
  actors: new Map([[owner, { role: "owner", signingPublicKey: vectors.signingPublicKey }]]),
  taken: new Set(),
  inTrash: new Set(),
  ...over,
});
const create = (itemId: string, over: Partial<GroupedCreate> = {}): GroupedCreate => ({
  actorId: owner,
  itemId,
  write: write(a1),
  ...over,
});

/** Each outcome: "ok", or the refusal as `asRefusal` gives it (code, message and field). */
function outcomes(...args: Parameters<typeof decideGroupedCreates>): unknown[] {
  return decideGroupedCreates(...args).outcomes.map((o) => (o.ok ? "ok" : asRefusal(o.error as AppError)));
}
/** An item-link refusal (free text from protocol/formats/item-log.ts): its code and field. */
const linkRefusal = (code: string, field: string) => expect.objectContaining({ code, field });

describe("decideGroupedCreates", () => {
  test("the vault's limits count the creates accepted before: the one that would pass them is refused, a smaller one after it still fits", () => {
    const small = { encryptedName: "AAAA", encryptedData: "AAAA" };
    const big = { encryptedName: "AAAA", encryptedData: "A".repeat(40) };
    const limits = { maxItems: 3, maxBytes: 3 * itemBytes(small) + 1 };
    const group = [
      create("i1", { write: small }),
      create("i2", { write: small }),
      create("i3", { write: big }),
      create("i4", { write: small }),
      create("i5", { write: small }),
    ];
    expect(outcomes(locked(), group, limits)).toEqual([
      "ok",
      "ok",
      asRefusal(vaultBytesFull(2 * itemBytes(small), limits.maxBytes)),
      "ok",
      asRefusal(vaultItemsFull(3, 3)),
    ]);
    // As the lock found it: one item already there leaves room for two more.
    expect(outcomes(locked({ firm: { items: 1, bytes: itemBytes(small) } }), group.slice(0, 2).concat(group[3]!), limits)).toEqual([
      "ok",
      "ok",
      asRefusal(vaultItemsFull(3, 3)),
    ]);
    expect(decideGroupedCreates(locked(), group, limits).firm).toEqual({ items: 3, bytes: 3 * itemBytes(small) });
  });

  test("an id is taken by the vault, its trash, or a create earlier in the group; a refused create does not take it", () => {
    const group = [
      create("x"),
      create("t"),
      create("new"),
      create("new"),
      create("d", { write: { ...write(a1), keyVersion: 2 } }),
      create("d"),
    ];
    expect(outcomes(locked({ taken: new Set(["x"]), inTrash: new Set(["t"]) }), group, ROOMY)).toEqual([
      asRefusal(itemIdTaken()),
      asRefusal(itemIdInTrash()),
      "ok",
      asRefusal(itemIdTaken()),
      asRefusal(keyVersionMismatch(1, 2)),
      "ok",
    ]);
  });

  test("a caller who is not a member is refused alone; with no vault, every create is", () => {
    const group = [create("a"), create("b", { actorId: stranger }), create("c")];
    expect(outcomes(locked(), group, ROOMY)).toEqual(["ok", asRefusal(vaultNotFound()), "ok"]);
    expect(outcomes(null, group, ROOMY)).toEqual([asRefusal(vaultNotFound()), asRefusal(vaultNotFound()), asRefusal(vaultNotFound())]);
  });

  test("each link must follow the head the accepted creates before it left; a refused create does not move it", () => {
    const roster = { seq: 0, hash: links[0]!.rosterHead };
    const withLog = locked({ itemLog: headAfter(1), roster });
    const a = create(links[1]!.itemId!, { write: write(a1), itemLink: links[1]! });
    const b = create(links[2]!.itemId!, { write: write(b1), itemLink: links[2]! });
    const both = decideGroupedCreates(withLog, [a, b], ROOMY).outcomes;
    expect(both.map((o) => o.ok && o.link?.head.seq)).toEqual([1, 2]);
    expect(both.map((o) => o.ok && o.link?.head.head)).toEqual([vectors.vectors[1]!.hash, vectors.vectors[2]!.hash]);
    // b's link names a's: without a accepted first, it names a head the vault does not have.
    expect(outcomes(withLog, [b, a], ROOMY)).toEqual([linkRefusal("INVALID", "itemLink.seq"), "ok"]);
    expect(outcomes(withLog, [{ ...a, actorId: stranger }, b], ROOMY)).toEqual([
      asRefusal(vaultNotFound()),
      linkRefusal("INVALID", "itemLink.seq"),
    ]);
    // The same link twice: the second names a head the first has moved on from.
    expect(outcomes(withLog, [a, { ...a, itemId: "other" }], ROOMY)).toEqual(["ok", linkRefusal("CONFLICT", "itemLink.seq")]);
  });
});

describe("planItemCreate: one create, one plan", () => {
  const one = (over: Partial<LockedForCreate> = {}): LockedForCreate => ({
    vaultId,
    keyVersion: 1,
    itemLog: null,
    roster: null,
    firm: { items: 0, bytes: 0 },
    actor: { role: "owner", signingPublicKey: vectors.signingPublicKey },
    taken: false,
    inTrash: false,
    ...over,
  });

  test("a member's create on a vault without a signed log: revision 1, the vault grows by the item, no link", () => {
    const plan = planItemCreate(one(), create("i1"), ROOMY);
    expect(plan.decision).toMatchObject({ revision: 1, growth: { items: 1, bytes: itemBytes(a1) } });
    expect(plan.link).toBeUndefined();
  });

  test.each<[string, LockedForCreate | null, Partial<GroupedCreate>, AppError]>([
    ["no such vault", null, {}, vaultNotFound()],
    ["a caller who is not a member", one({ actor: undefined }), {}, vaultNotFound()],
    ["an id the vault holds", one({ taken: true }), {}, itemIdTaken()],
    ["an id in the vault's trash", one({ inTrash: true }), {}, itemIdInTrash()],
    ["a write made at an older key version", one({ keyVersion: 2 }), { write: { ...write(a1), keyVersion: 1 } }, keyVersionMismatch(2, 1)],
    ["no link on a vault that keeps a signed item log", one({ itemLog: headAfter(1), roster: null }), {}, itemLinkMissing("itemLink")],
  ])("%s", (_, locked, over, refusal) => {
    expect(outcomeOf(() => planItemCreate(locked, create("i1", over), ROOMY))).toEqual(asRefusal(refusal));
  });

  test("a vault at its item limit takes no more", () => {
    const refused = outcomeOf(() =>
      planItemCreate(one({ firm: { items: 3, bytes: 0 } }), create("i1"), { maxItems: 3, maxBytes: 1 << 20 }),
    );
    expect(refused).toEqual(asRefusal(vaultItemsFull(3, 3)));
  });
});
