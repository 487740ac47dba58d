/**
 * The item log's step (lib/domain/items/log.ts): a write on a vault that keeps a signed item log
 * carries its next link, a vault without a signed roster takes none. The links are the published
 * item-log test vectors (protocol/vectors/item-log-vectors.json).
 */
import type { UserId } from "../../../../../lib/domain/ids";
import {
  decideItemLinkStep,
  decideItemWriteStep,
  decideRekeyItemStep,
  parseRequestItemLink,
  type ItemLinkCheck,
} from "../../../../../lib/domain/items/log";
import { itemLinkMissing, itemLinkRaced, itemLinkRefused, itemLogWithoutRoster } from "../../../../../lib/domain/items/refusals";
import { applyItemLink, parseItemLink } from "../../../../../protocol/formats/item-log";
import vectors from "../../../../../protocol/vectors/item-log-vectors.json";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const links = vectors.vectors.map((v) => parseItemLink(v.link));
const first = links[0]!;
const actor = { userId: first.actorId as UserId, signingPublicKey: vectors.signingPublicKey };
const head = applyItemLink(null, first, vectors.vectors[0]!.hash);
/** The vault as the first vector's checkpoint finds it: a signed roster, no item log yet. */
const check = (over: Partial<ItemLinkCheck> = {}): ItemLinkCheck => ({
  vaultId: first.vaultId,
  head: null,
  roster: { seq: first.rosterSeq, hash: first.rosterHead },
  keyVersionAfter: first.keyVersion,
  actor,
  change: { op: "checkpoint", count: first.count!, setDigest: first.setDigest! },
  ...over,
});

test.each<[string, () => unknown, unknown]>([
  ["a vault without a log, a write without a link: no step", () => decideItemLinkStep(undefined, check()), undefined],
  ["the log's first link, a checkpoint: the vault's new head", () => decideItemLinkStep(first, check())?.head, head],
  [
    "a write without its link on a vault that keeps a log",
    () => decideItemLinkStep(undefined, check({ head })),
    asRefusal(itemLinkMissing("itemLink")),
  ],
  [
    "a link on a vault without a signed roster",
    () => decideItemLinkStep(first, check({ roster: null })),
    asRefusal(itemLogWithoutRoster("itemLink")),
  ],
  [
    "a link signed for another caller",
    () => decideItemLinkStep(first, check({ actor: { ...actor, userId: "00000000-0000-4000-8000-000000000009" as UserId } })),
    asRefusal(itemLinkRefused("itemLink.actorId", "the link's actor is not the caller")),
  ],
  [
    "a link on a head the log has moved past",
    () => decideItemLinkStep(first, check({ head })),
    asRefusal(itemLinkRaced("itemLink.seq", `the item log is at seq ${head.seq}, the link at ${first.seq}`)),
  ],
  [
    "a request's link that is not an object",
    () => parseRequestItemLink("a link"),
    asRefusal(itemLinkRefused("itemLink", "an item link must be an object")),
  ],
])("decideItemLinkStep: %s", (_what, decide, expected) => {
  let outcome: unknown;
  const refused = outcomeOf(() => (outcome = decide()));
  expect(refused === "ok" ? outcome : refused).toEqual(expected);
});

test("an item write or a rekey on a vault that keeps a log, without its link: itemLinkMissing", () => {
  const locked = { keyVersion: 1, itemLog: head, roster: { seq: 0, hash: first.rosterHead }, signingPublicKey: actor.signingPublicKey };
  const change = { op: "delete" as const, itemId: "i", before: { revision: 1, sha256: "00".repeat(32) } };
  expect(outcomeOf(() => decideItemWriteStep({ vaultId: first.vaultId, actorId: actor.userId }, locked, change))).toEqual(
    asRefusal(itemLinkMissing("itemLink")),
  );
  const rekey = { vaultId: first.vaultId, head, rosterAfter: null, keyVersionAfter: 2, actor, current: new Map(), items: [] };
  expect(outcomeOf(() => decideRekeyItemStep(undefined, rekey))).toEqual(asRefusal(itemLinkMissing("itemLink")));
  expect(decideRekeyItemStep(undefined, { ...rekey, head: null })).toBeUndefined();
});
