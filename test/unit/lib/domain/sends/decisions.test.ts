/** The rules of sends (lib/domain/sends/decisions.ts): making one, its parts, finishing it, opening it by its link, reading and deleting it. */
import { MAX_SEND_PARTS, MAX_SEND_PART_SEALED } from "../../../../../protocol/formats/sends";
import {
  MIN_SEND_LIFETIME_MS,
  SEND_ACCESS_MS,
  planSendCreate,
  planSendDelete,
  planSendFinish,
  planSendOpen,
  planSendOpenCheck,
  planSendPartRead,
  planSendPartTarget,
  planSendPartWrite,
  sendLifetimeOf,
  DEFAULT_SEND_LIFETIME_MS,
  type SendLimits,
  type SendPolicy,
  type SendRequest,
  type SendSnapshot,
  type SendState,
} from "../../../../../lib/domain/sends/decisions";
import {
  sendAccessInvalid,
  sendFinished,
  sendIdTaken,
  sendIncomplete,
  sendLifetimeRefused,
  sendNotFound,
  sendPartOutOfRange,
  sendPartsTooLarge,
  sendPasswordRequired,
  sendQuotaFull,
  sendsForbidden,
  sendTooLarge,
  tooManySends,
} from "../../../../../lib/domain/sends/refusals";
import type { UserId } from "../../../../../lib/domain/ids";
import { invalid, type AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const MIB = 1024 * 1024;
const DAY = 86_400_000;
const O = 28; // what AES-GCM adds to each part
const ada = "00000000-0000-4000-8000-00000000000a" as UserId;
const bob = "00000000-0000-4000-8000-00000000000b" as UserId;
const limits: SendLimits = { maxBytes: 100 * MIB, perUser: 3, orgQuotaBytes: 200 * MIB, maxLifetimeMs: 30 * DAY };
const open: SendPolicy = { forbidden: false, maxLifetimeMs: null };
const forbidden: SendPolicy = { forbidden: true, maxLifetimeMs: null };
const capped = (ms: number): SendPolicy => ({ forbidden: false, maxLifetimeMs: ms });
const fresh: SendSnapshot = { idTaken: false, ownerLive: 0, orgBytes: 0 };
/** A file of 2 MiB and a half: the header of 200 bytes, parts of 1 MiB, 1 MiB and half of one; 28 bytes more each, sealed. */
const sizes = [200 + O, MIB + O, MIB + O, MIB / 2 + O];
const bytes = sizes.reduce((a, b) => a + b, 0);
const req: SendRequest = { parts: 4, bytes, lifetimeMs: 7 * DAY };
const now = Date.parse("2025-06-01T12:00:00Z");
const sending: SendState = {
  ownerId: ada,
  parts: 4,
  bytes,
  complete: false,
  expiresAtMs: now + DAY,
  maxViews: null,
  views: 0,
  partsGoneAtMs: null,
};
const sent: SendState = { ...sending, complete: true };
const received = new Map(sizes.map((size, i) => [i, size]));
const without = (index: number) => new Map([...received].filter(([i]) => i !== index));

const row = (name: string, fn: () => unknown, expected: AppError | "ok"): [string, () => unknown, AppError | "ok"] => [name, fn, expected];
const create = (r: Partial<SendRequest>, s: Partial<SendSnapshot> = {}, policy = open) =>
  planSendCreate({ ...fresh, ...s }, { ...req, ...r }, limits, policy);
const partsRefused = () => invalid(`A send has 1 to ${MAX_SEND_PARTS} parts`, "parts");
const bytesRefused = (parts: number) =>
  invalid(`${parts} sealed parts hold ${parts * O} to ${parts * MAX_SEND_PART_SEALED} bytes`, "bytes");

const creates = [
  row("a send within every limit", () => create({}), "ok"),
  row("a text: one part", () => create({ parts: 1, bytes: 300 }), "ok"),
  row("the most parts, each empty", () => create({ parts: MAX_SEND_PARTS, bytes: MAX_SEND_PARTS * O }), "ok"),
  row(
    "sends forbidden, before anything else is looked at",
    () => create({ parts: 0, lifetimeMs: 0 }, { idTaken: true }, forbidden),
    sendsForbidden(),
  ),
  row("no part", () => create({ parts: 0, bytes: 0 }), partsRefused()),
  row("one part past MAX_SEND_PARTS", () => create({ parts: MAX_SEND_PARTS + 1 }), partsRefused()),
  row("a fraction of a part", () => create({ parts: 1.5 }), partsRefused()),
  row("fewer bytes than the parts' IVs and tags", () => create({ bytes: 4 * O - 1 }), bytesRefused(4)),
  row("more bytes than the parts can hold", () => create({ parts: 1, bytes: MAX_SEND_PART_SEALED + 1 }), bytesRefused(1)),
  row("the most one part holds", () => create({ parts: 1, bytes: MAX_SEND_PART_SEALED }), "ok"),
  row(
    "a lifetime a millisecond short of a minute",
    () => create({ lifetimeMs: MIN_SEND_LIFETIME_MS - 1 }),
    sendLifetimeRefused("30 days", "server"),
  ),
  row("a lifetime of a minute", () => create({ lifetimeMs: MIN_SEND_LIFETIME_MS }), "ok"),
  row("a lifetime of SEND_MAX_LIFETIME", () => create({ lifetimeMs: 30 * DAY }), "ok"),
  row("a lifetime past SEND_MAX_LIFETIME", () => create({ lifetimeMs: 30 * DAY + 1 }), sendLifetimeRefused("30 days", "server")),
  row(
    "a lifetime past a lower policy cap",
    () => create({ lifetimeMs: 4 * DAY }, {}, capped(3 * DAY)),
    sendLifetimeRefused("3 days", "policy"),
  ),
  row("a lifetime of the policy cap", () => create({ lifetimeMs: 3 * DAY }, {}, capped(3 * DAY)), "ok"),
  row(
    "under a minute, with a policy cap of 90 minutes",
    () => create({ lifetimeMs: 1000 }, {}, capped(90 * 60_000)),
    sendLifetimeRefused("90 minutes", "policy"),
  ),
  row(
    "past the server's cap, under a policy cap above it",
    () => create({ lifetimeMs: 31 * DAY }, {}, capped(60 * DAY)),
    sendLifetimeRefused("30 days", "server"),
  ),
  row(
    "past a policy cap equal to the server's",
    () => create({ lifetimeMs: 31 * DAY }, {}, capped(30 * DAY)),
    sendLifetimeRefused("30 days", "server"),
  ),
  row(
    "a byte past SEND_MAX_BYTES",
    () => create({ parts: 101, bytes: 100 * MIB + 1 }, { idTaken: true }),
    sendTooLarge(100 * MIB + 1, 100 * MIB),
  ),
  row("exactly SEND_MAX_BYTES", () => create({ parts: 101, bytes: 100 * MIB }), "ok"),
  row("with a sendId in use", () => create({}, { idTaken: true, ownerLive: 3 }), sendIdTaken()),
  row("by a member with SEND_MAX_PER_USER live sends", () => create({}, { ownerLive: 3, orgBytes: 200 * MIB }), tooManySends(3)),
  row("by a member with one send less", () => create({}, { ownerLive: 2 }), "ok"),
  row(
    "a byte past the organization's quota",
    () => create({}, { orgBytes: 200 * MIB - bytes + 1 }),
    sendQuotaFull(200 * MIB - bytes + 1, bytes, 200 * MIB),
  ),
  row("exactly up to the quota", () => create({}, { orgBytes: 200 * MIB - bytes }), "ok"),
];

const writes = [
  row("the header, by its sender", () => planSendPartWrite(sending, ada, now, { index: 0, size: sizes[0]!, others: 0 }), "ok"),
  row(
    "the last part, all others there",
    () => planSendPartWrite(sending, ada, now, { index: 3, size: sizes[3]!, others: bytes - sizes[3]! }),
    "ok",
  ),
  row(
    "a part again, in place of itself",
    () => planSendPartWrite(sending, ada, now, { index: 1, size: sizes[1]!, others: bytes - sizes[1]! }),
    "ok",
  ),
  row("an empty part", () => planSendPartWrite(sending, ada, now, { index: 2, size: O, others: 0 }), "ok"),
  row("to no send", () => planSendPartWrite(undefined, ada, now, { index: 0, size: sizes[0]!, others: 0 }), sendNotFound()),
  row("to another member's send", () => planSendPartWrite(sending, bob, now, { index: 0, size: sizes[0]!, others: 0 }), sendNotFound()),
  row(
    "to another member's finished send",
    () => planSendPartWrite(sent, bob, now, { index: 0, size: sizes[0]!, others: 0 }),
    sendNotFound(),
  ),
  row("to a finished send", () => planSendPartWrite(sent, ada, now, { index: 9, size: 1, others: 0 }), sendFinished()),
  row(
    "to a send that expired before it was finished (it no longer counts against the quota's room)",
    () => planSendPartWrite({ ...sending, expiresAtMs: now }, ada, now, { index: 0, size: sizes[0]!, others: 0 }),
    sendNotFound(),
  ),
  row("past the last part", () => planSendPartWrite(sending, ada, now, { index: 4, size: O, others: 0 }), sendPartOutOfRange(4, 4)),
  // Before a part's body is read: the same refusals as the write, but its size.
  row("a part's target, its sender's send in the making", () => planSendPartTarget(sending, ada, now, 3), "ok"),
  row("a part's target: no send", () => planSendPartTarget(undefined, ada, now, 0), sendNotFound()),
  row("a part's target: another member's send", () => planSendPartTarget(sending, bob, now, 0), sendNotFound()),
  row("a part's target: a finished send", () => planSendPartTarget(sent, ada, now, 0), sendFinished()),
  row(
    "a part's target: expired before it was finished",
    () => planSendPartTarget({ ...sending, expiresAtMs: now }, ada, now, 0),
    sendNotFound(),
  ),
  row("a part's target: past the last part", () => planSendPartTarget(sending, ada, now, 4), sendPartOutOfRange(4, 4)),
  row("before the first part", () => planSendPartWrite(sending, ada, now, { index: -1, size: O, others: 0 }), sendPartOutOfRange(-1, 4)),
  row("between two parts", () => planSendPartWrite(sending, ada, now, { index: 1.5, size: O, others: 0 }), sendPartOutOfRange(1.5, 4)),
  row(
    "shorter than an IV and a tag",
    () => planSendPartWrite(sending, ada, now, { index: 1, size: O - 1, others: 0 }),
    sendPartsTooLarge(bytes),
  ),
  row(
    "larger than any part",
    () =>
      planSendPartWrite({ ...sending, bytes: 2 * MAX_SEND_PART_SEALED }, ada, now, { index: 1, size: MAX_SEND_PART_SEALED + 1, others: 0 }),
    sendPartsTooLarge(2 * MAX_SEND_PART_SEALED),
  ),
  row(
    "a byte past the declared size",
    () => planSendPartWrite(sending, ada, now, { index: 3, size: sizes[3]! + 1, others: bytes - sizes[3]! }),
    sendPartsTooLarge(bytes),
  ),
];

const finishes = [
  row("with every part, adding up", () => planSendFinish(sending, ada, now, received), "ok"),
  row("again, once finished", () => planSendFinish(sent, ada, now, received), "ok"),
  row("another member's", () => planSendFinish(sending, bob, now, received), sendNotFound()),
  row("another member's finished send", () => planSendFinish(sent, bob, now, received), sendNotFound()),
  row("no send", () => planSendFinish(undefined, ada, now, received), sendNotFound()),
  row("with part 1 missing: the first one missing is named", () => planSendFinish(sending, ada, now, without(1)), sendIncomplete(1, 4)),
  row(
    "with parts 2 and 3 missing",
    () => planSendFinish(sending, ada, now, new Map([...without(2)].filter(([i]) => i !== 3))),
    sendIncomplete(2, 4),
  ),
  row("with none", () => planSendFinish(sending, ada, now, new Map()), sendIncomplete(0, 4)),
  row(
    "with parts a byte short of the size",
    () => planSendFinish(sending, ada, now, new Map([...received, [3, sizes[3]! - 1]])),
    sendIncomplete(null, 4),
  ),
];

const check = (s: SendState | undefined, policy = open, password = { required: false, given: false }, linkProven = true) =>
  planSendOpenCheck(s, now, policy, { linkProven, passwordRequired: password.required, passwordGiven: password.given });
const opens = [
  row("a finished send", () => check(sent), "ok"),
  row("a finished send, a millisecond before it expires", () => check({ ...sent, expiresAtMs: now + 1 }), "ok"),
  row("a send with a view left", () => check({ ...sent, maxViews: 3, views: 2 }), "ok"),
  row("no send", () => check(undefined), sendNotFound()),
  row("a send not finished", () => check(sending), sendNotFound()),
  row("a send expiring now", () => check({ ...sent, expiresAtMs: now }), sendNotFound()),
  row("a send with its views taken", () => check({ ...sent, maxViews: 3, views: 3 }), sendNotFound()),
  row("a send whose organization forbids sends", () => check(sent, forbidden), sendNotFound()),
  row("a send with a password, without it", () => check(sent, open, { required: true, given: false }), sendPasswordRequired()),
  row("a send with a password, with a proof", () => check(sent, open, { required: true, given: true }), "ok"),
  row("a send's id without its link's proof", () => check(sent, open, { required: false, given: false }, false), sendNotFound()),
  row(
    "a send with a password, by its id alone: no password asked for",
    () => check(sent, open, { required: true, given: false }, false),
    sendNotFound(),
  ),
  row("a send not finished, with a password, without it", () => check(sending, open, { required: true, given: false }), sendNotFound()),
  row("a view taken of a finished send", () => planSendOpen(sent, now, open), "ok"),
  row("a view taken of no send", () => planSendOpen(undefined, now, open), sendNotFound()),
  row("a view taken of a send not finished", () => planSendOpen(sending, now, open), sendNotFound()),
  row("a view taken of a send expiring now", () => planSendOpen({ ...sent, expiresAtMs: now }, now, open), sendNotFound()),
  row("a view taken of a send with none left", () => planSendOpen({ ...sent, maxViews: 1, views: 1 }, now, open), sendNotFound()),
  row("a view taken where sends are forbidden", () => planSendOpen(sent, now, forbidden), sendNotFound()),
];

const reads = [
  row("a part of an open send", () => planSendPartRead(sent, now, 3, true), "ok"),
  row("a part, once the organization forbids sends", () => planSendPartRead(sent, now, 3, true, forbidden), sendNotFound()),
  row("before the first part", () => planSendPartRead(sent, now, -1, true), sendPartOutOfRange(-1, 4)),
  row("a part, a millisecond before the parts go", () => planSendPartRead({ ...sent, partsGoneAtMs: now + 1 }, now, 3, true), "ok"),
  row("without a valid access, before anything else is looked at", () => planSendPartRead(undefined, now, 9, false), sendAccessInvalid()),
  row("without a valid access, of an open send", () => planSendPartRead(sent, now, 1, false), sendAccessInvalid()),
  row("of no send", () => planSendPartRead(undefined, now, 1, true), sendNotFound()),
  row("of a send not finished", () => planSendPartRead(sending, now, 1, true), sendNotFound()),
  row("once its parts are gone", () => planSendPartRead({ ...sent, partsGoneAtMs: now }, now, 9, true), sendNotFound()),
  row("once it expired", () => planSendPartRead({ ...sent, expiresAtMs: now }, now, 1, true), sendNotFound()),
  row("past the last part", () => planSendPartRead(sent, now, 4, true), sendPartOutOfRange(4, 4)),
  row("deleting one's own send being made", () => planSendDelete(sending, ada), "ok"),
  row("deleting one's own finished send", () => planSendDelete(sent, ada), "ok"),
  row("deleting another member's send", () => planSendDelete(sent, bob), sendNotFound()),
  row("deleting no send", () => planSendDelete(undefined, ada), sendNotFound()),
];

test.each([...creates, ...writes, ...finishes, ...opens, ...reads])("%s", (_name, fn, expected) => {
  expect(outcomeOf(fn)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test("every refusal of the table is a named one, with the code the API answers", () => {
  expect(
    [sendNotFound(), sendsForbidden(), sendTooLarge(2, 1), tooManySends(1), sendPasswordRequired(), sendAccessInvalid()].map((e) => e.type),
  ).toEqual(["NOT_FOUND", "FORBIDDEN", "PAYLOAD_TOO_LARGE", "PAYLOAD_TOO_LARGE", "UNAUTHORIZED", "UNAUTHORIZED"]);
  expect(sendLifetimeRefused("3 days", "policy").message).toContain("the organization's sendMaxLifetime");
  expect(sendLifetimeRefused("30 days", "server").message).toContain("SEND_MAX_LIFETIME");
});

test("a finish that finishes the send says so; one sent again after a lost answer does not, and changes nothing", () => {
  expect(planSendFinish(sending, ada, now, received)).toBe(true);
  expect(planSendFinish(sent, ada, now, received)).toBe(false);
  expect(planSendFinish(sent, ada, now, new Map())).toBe(false);
});

test("each open counts a view; with no cap none are left to count", () => {
  expect(planSendOpen(sent, now, open)).toEqual({ views: 1, viewsLeft: null, partsGoneAtMs: null });
  expect(planSendOpen({ ...sent, views: 41 }, now, open)).toEqual({ views: 42, viewsLeft: null, partsGoneAtMs: null });
  expect(planSendOpen({ ...sent, maxViews: 3, views: 1 }, now, open)).toEqual({ views: 2, viewsLeft: 1, partsGoneAtMs: null });
});

test("the last view takes the parts: a send of one part at once, a file once its opener has had SEND_ACCESS_MS to read it", () => {
  const text: SendState = { ...sent, parts: 1, bytes: 300, maxViews: 1 };
  expect(planSendOpen(text, now, open)).toEqual({ views: 1, viewsLeft: 0, partsGoneAtMs: now });
  expect(planSendOpen({ ...sent, maxViews: 2, views: 1 }, now, open)).toEqual({
    views: 2,
    viewsLeft: 0,
    partsGoneAtMs: now + SEND_ACCESS_MS,
  });
  // The view before the last takes nothing.
  expect(planSendOpen({ ...text, maxViews: 2 }, now, open).partsGoneAtMs).toBeNull();
});

test("a new send's lifetime: a week when none is asked, the duration asked, and a refusal naming the cap for what is not one", () => {
  expect(sendLifetimeOf(undefined, { maxLifetimeMs: 30 * DAY })).toBe(DEFAULT_SEND_LIFETIME_MS);
  expect(DEFAULT_SEND_LIFETIME_MS).toBe(7 * DAY);
  expect(sendLifetimeOf("90m", { maxLifetimeMs: 30 * DAY })).toBe(90 * 60_000);
  expect(outcomeOf(() => sendLifetimeOf("soon", { maxLifetimeMs: DAY }))).toEqual(asRefusal(sendLifetimeRefused("1 day", "server")));
  expect(outcomeOf(() => sendLifetimeOf("1w", { maxLifetimeMs: 36 * 3_600_000 }))).toEqual(
    asRefusal(sendLifetimeRefused("36 hours", "server")),
  );
});

test("a finish of a send that expired unfinished is refused as no send; one finished before stays finished", () => {
  const expired = { ...sending, expiresAtMs: now };
  const all = new Map(sizes.map((size, i) => [i, size]));
  expect(outcomeOf(() => planSendFinish(expired, ada, now, all))).toEqual(asRefusal(sendNotFound()));
  expect(planSendFinish({ ...expired, complete: true }, ada, now, all)).toBe(false);
});
