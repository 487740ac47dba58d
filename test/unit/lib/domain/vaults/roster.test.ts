/**
 * The server's check of a roster link (lib/domain/vaults/roster.ts): every rule the protocol or
 * the server finds broken is `rosterLinkRefused`, naming the link's field under the request's. The
 * link is the first of the published roster vectors (protocol/vectors/roster-vectors.json).
 */
import type { UserId } from "../../../../../lib/domain/ids";
import { rosterLinkRefused } from "../../../../../lib/domain/vaults/refusals";
import { checkRosterLink, parseRosterLink, type LinkCheck } from "../../../../../lib/domain/vaults/roster";
import vectors from "../../../../../protocol/vectors/roster-vectors.json";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const raw = vectors.vectors[0]!.link;
const link = parseRosterLink(raw)!;
const wraps = [{ userId: link.actorId as UserId, encryptedVaultKey: "" }];
/** The request the link starts a chain for, by its signer. */
const check = (over: Partial<LinkCheck> = {}): LinkCheck => ({
  before: null,
  actor: { userId: link.actorId as UserId, publicKey: "", signingPublicKey: vectors.signingPublicKey },
  keyVersionAfter: 1,
  change: { op: "create", vaultType: "shared", name: "Team", wraps },
  ...over,
});

test.each<[string, () => unknown, unknown]>([
  ["a link of the published vectors, parsed", () => parseRosterLink(raw), "ok"],
  [
    "a request's link that is not an object, under the request's field",
    () => parseRosterLink("a link", "adopt.rosterLink"),
    asRefusal(rosterLinkRefused("adopt.rosterLink", "a roster link must be an object")),
  ],
  [
    "a link without its signature",
    () => parseRosterLink({ ...raw, sig: undefined }),
    asRefusal(rosterLinkRefused("rosterLink.sig", "a create link needs sig")),
  ],
  [
    "a link for another change than the request's",
    () => checkRosterLink(link, check({ change: { op: "rename", name: "Team" } })),
    asRefusal(rosterLinkRefused("rosterLink.op", "the request is a rename, the link a create")),
  ],
  [
    "a link whose actor is not the caller",
    () => checkRosterLink(link, check({ actor: { ...check().actor, userId: "00000000-0000-4000-8000-000000000009" as UserId } })),
    asRefusal(rosterLinkRefused("rosterLink.actorId", "the link's actor is not the caller")),
  ],
])("roster link: %s", (_what, decide, expected) => {
  expect(outcomeOf(decide)).toEqual(expected);
});
