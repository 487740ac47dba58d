/**
 * Sends (lib/store/port/sends.ts), run inside the store contract against every adapter, with parts
 * sealed as clients seal them (protocol/formats/sends.ts): a send's round trip, every refusal by
 * its named constructor, opens and makes racing (real concurrency), the sweeper's purge, a removed
 * member's sends, and the events each change writes. Whether a part's bytes are really gone, not
 * only refused, is asked with a read at a time before the send's parts were due to go: the rule
 * lets it through, so only a missing row answers "not found".
 */
import { createHash, randomBytes } from "node:crypto";
import { newId, type InviteId, type OrgId, type SendId, type UserId } from "../../lib/domain/ids";
import type { AppError } from "../../lib/errors";
import type { DomainEvent } from "../../lib/domain/audit/events";
import type { SendLimits, SendPolicy } from "../../lib/domain/sends/decisions";
import * as refusals from "../../lib/domain/sends/refusals";
import type { Store } from "../../lib/store/port";
import type { Bytes } from "../../protocol/encoding";
import {
  SEND_PART_BYTES,
  headerBytes,
  openSendPart,
  parseSendHeader,
  sealSendPart,
  sendPartCount,
  type SendHeader,
} from "../../protocol/formats/sends";
import { digest } from "../helpers/sealed-files";
import { newUserKeys, registrationBundle } from "../helpers/crypto";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
const LIMITS: SendLimits = { maxBytes: 64 << 20, perUser: 100, orgQuotaBytes: 1 << 30, maxLifetimeMs: 30 * DAY };
const OPEN: SendPolicy = { forbidden: false, maxLifetimeMs: null };

interface Person {
  userId: UserId;
  orgId: OrgId;
}

/** A send as a client seals it: its key, its parts' plaintexts and sealed parts, and their sealed size. */
interface Sealed {
  sendId: SendId;
  key: Bytes;
  plain: Bytes[];
  parts: Bytes[];
  bytes: number;
}

/** A text (no `fileSize`) or a file of `fileSize` random bytes: the header, then the file's parts. */
async function sealSend(fileSize?: number): Promise<Sealed> {
  const sendId = newId<SendId>();
  const key = new Uint8Array(randomBytes(32));
  const header: SendHeader =
    fileSize === undefined
      ? { v: 1, kind: "text", title: "Wi-Fi", text: "correct horse battery staple" }
      : { v: 1, kind: "file", title: "Report", file: { name: "report.bin", type: "application/octet-stream", size: fileSize } };
  const count = sendPartCount(header);
  const file = new Uint8Array(randomBytes(fileSize ?? 0));
  const plain = [headerBytes(header)];
  for (let i = 0; i < count - 1; i++) plain.push(file.subarray(i * SEND_PART_BYTES, (i + 1) * SEND_PART_BYTES));
  const parts = await Promise.all(plain.map((p, i) => sealSendPart(key, sendId, i, i === count - 1, p)));
  return { sendId, key, plain, parts, bytes: parts.reduce((sum, p) => sum + p.length, 0) };
}

/** The refusal `p` must end in: the named constructor's code, message and field. */
async function refused(p: Promise<unknown>, refusal: AppError): Promise<void> {
  await expect(p).rejects.toMatchObject({ type: refusal.type, message: refusal.message, data: refusal.data });
}

type MakeOpts = Partial<{ maxViews: number | null; lifetimeMs: number; limits: SendLimits; policy: SendPolicy; now: string }> & {
  events?: DomainEvent[];
};

/** A stand-in for the SHA-256 of a link's access proof, one per send (the store keeps it as given). */
const accessHashOf = (sendId: string) => createHash("sha256").update(`access-of-${sendId}`).digest("hex");

export function describeSends(getStore: () => Store): void {
  let store: Store;
  beforeAll(() => {
    store = getStore();
  });

  async function register(inviter?: Person): Promise<Person> {
    const user = { ...registrationBundle(await newUserKeys()), userId: newId<UserId>(), authHash: "scrypt$stored", createdAt: at() };
    const email = `${newId()}@example.test`;
    if (!inviter)
      return store.accounts.registerOwnerOfNewOrg({
        user: { ...user, email },
        org: { orgId: newId(), name: "Sends", createdAt: at() },
        onlyIfFirstUser: false,
      });
    const inviteId = newId<InviteId>();
    const invite = { inviteId, orgId: inviter.orgId, email, role: "member" as const, inviterId: inviter.userId };
    await store.invites.createInvite({
      invite: { ...invite, status: "pending", expiresAt: at(HOUR), createdAt: at() },
      tokenHash: newId(),
    });
    return store.accounts.registerWithInvite({ user: { ...user, email }, inviteId, now: at() });
  }

  /** The owner of a new organization, and `members` more people in it. */
  async function org(members = 0): Promise<Person[]> {
    const owner = await register();
    const people = [owner];
    for (let i = 0; i < members; i++) people.push(await register(owner));
    return people;
  }

  const create = (p: Person, s: Pick<Sealed, "sendId" | "parts" | "bytes">, o: MakeOpts = {}) =>
    store.sends.createSend({
      actorId: p.userId,
      orgId: p.orgId,
      sendId: s.sendId,
      parts: s.parts.length,
      bytes: s.bytes,
      maxViews: o.maxViews ?? null,
      accessHash: accessHashOf(s.sendId),
      passwordHash: null,
      ownerNote: `note-of-${s.sendId}`,
      lifetimeMs: o.lifetimeMs ?? DAY,
      limits: o.limits ?? LIMITS,
      policy: o.policy ?? OPEN,
      now: o.now ?? at(),
      ...(o.events && { events: o.events }),
    });
  const put = (p: Person, s: Sealed, index: number, data = s.parts[index]!, now = at()) =>
    store.sends.putPart({ actorId: p.userId, sendId: s.sendId, index, data, now });
  const finish = (p: Person, s: Sealed, events?: DomainEvent[], now = at()) =>
    store.sends.finishSend({ actorId: p.userId, sendId: s.sendId, now, ...(events && { events }) });
  /** Makes, sends every part and finishes, at the make's time. */
  async function make(p: Person, s: Sealed, o: MakeOpts = {}) {
    await create(p, s, o);
    for (let i = 0; i < s.parts.length; i++) await put(p, s, i, undefined, o.now);
    return finish(p, s, undefined, o.now);
  }
  const open = (s: Sealed, o: { now?: string; policy?: SendPolicy; events?: (owner: Person) => DomainEvent[] } = {}) =>
    store.sends.openSend({
      sendId: s.sendId,
      now: o.now ?? at(),
      policy: o.policy ?? OPEN,
      events: (owner) => o.events?.({ userId: owner.ownerId, orgId: owner.orgId }) ?? [],
    });
  const read = (s: Sealed, index: number, o: { now?: string; accessOk?: boolean; policy?: SendPolicy } = {}) =>
    store.sends.readPart({ sendId: s.sendId, index, now: o.now ?? at(), accessOk: o.accessOk ?? true, policy: o.policy ?? OPEN });
  const list = (p: Person, now = at()) => store.sends.listSends({ actorId: p.userId, now });
  const ids = async (p: Person, now = at()) => (await list(p, now)).map((r) => r.sendId);
  const event = (type: DomainEvent["type"], p: Person): DomainEvent => ({
    eventId: newId(),
    type,
    at: at(),
    actorId: p.userId,
    orgId: p.orgId,
  });

  test("sends: parts sent in any order (one again replaces it), finished once, opened by part 0 with its views counted, the others read with access", async () => {
    const [ada, bob] = (await org(1)) as [Person, Person];
    const f = await sealSend(SEND_PART_BYTES + 10);
    expect(f.parts.length).toBe(3);
    const made = at(-10_000);
    expect(await create(ada, f, { maxViews: 3, now: made })).toEqual({
      sendId: f.sendId,
      ownerId: ada.userId,
      orgId: ada.orgId,
      parts: 3,
      bytes: f.bytes,
      maxViews: 3,
      views: 0,
      hasPassword: false,
      ownerNote: `note-of-${f.sendId}`,
      createdAt: made,
      expiresAt: new Date(Date.parse(made) + DAY).toISOString(),
      complete: false,
      partsGone: false,
      received: [],
    });
    for (const i of [2, 0, 1]) await put(ada, f, i);
    const again = await sealSendPart(f.key, f.sendId, 1, false, f.plain[1]!);
    await put(ada, f, 1, again);
    const done = await finish(ada, f);
    expect(done).toMatchObject({ sendId: f.sendId, complete: true, views: 0, partsGone: false });
    expect(await finish(ada, f)).toEqual(done);
    // What an open reads before the password: the organization, the access hash as made, the state.
    expect(await store.sends.sendGate({ sendId: f.sendId })).toMatchObject({
      orgId: ada.orgId,
      accessHash: accessHashOf(f.sendId),
      passwordHash: null,
      state: { ownerId: ada.userId, parts: 3, complete: true, views: 0 },
    });
    expect(await store.sends.sendGate({ sendId: newId<SendId>() })).toBeNull();

    const opened = await open(f);
    expect(opened).toMatchObject({ sendId: f.sendId, orgId: ada.orgId, ownerId: ada.userId, parts: 3, bytes: f.bytes, viewsLeft: 2 });
    expect(opened.expiresAt).toBe(done.expiresAt);
    const header = parseSendHeader(await openSendPart(f.key, f.sendId, 0, false, new Uint8Array(opened.header)));
    expect(header).toMatchObject({ kind: "file", title: "Report", file: { size: SEND_PART_BYTES + 10 } });
    const [one, two] = [await read(f, 1), await read(f, 2)];
    expect([digest(one), digest(two)]).toEqual([digest(again), digest(f.parts[2]!)]);
    expect(digest(await openSendPart(f.key, f.sendId, 2, true, new Uint8Array(two)))).toEqual(digest(f.plain[2]!));
    expect(digest(await read(f, 0))).toBe(digest(opened.header));

    // Newest first; another member's never; an expired one left out (though not yet swept).
    const g = await sealSend();
    await make(ada, g, { now: at(-5_000) });
    const expired = await sealSend();
    await make(ada, expired, { now: at(-2 * MIN), lifetimeMs: MIN });
    const theirs = await sealSend();
    await make(bob, theirs);
    expect(await ids(ada)).toEqual([g.sendId, f.sendId]);
    expect(await ids(ada, at(-90_000))).toEqual([g.sendId, f.sendId, expired.sendId]);
    expect(await ids(bob)).toEqual([theirs.sendId]);
    expect((await list(ada)).find((r) => r.sendId === f.sendId)).toMatchObject({ views: 1, complete: true, partsGone: false });
  });

  test("sends: every refusal of a make, by its named constructor, and nothing made by one", async () => {
    const [ada, bob] = (await org(1)) as [Person, Person];
    const [cy] = (await org()) as [Person];
    const s = await sealSend();
    await create(ada, s);
    await refused(create(bob, s), refusals.sendIdTaken());
    await refused(create(cy, s), refusals.sendIdTaken());
    const big = await sealSend(2000);
    await refused(create(ada, big, { limits: { ...LIMITS, maxBytes: big.bytes - 1 } }), refusals.sendTooLarge(big.bytes, big.bytes - 1));
    await refused(create(ada, big, { limits: { ...LIMITS, perUser: 1 } }), refusals.tooManySends(1));
    // The quota counts an unfinished send, with no part yet, at its full size.
    const quota = { ...LIMITS, orgQuotaBytes: s.bytes + big.bytes - 1 };
    await refused(create(bob, big, { limits: quota }), refusals.sendQuotaFull(s.bytes, big.bytes, quota.orgQuotaBytes));
    await refused(create(ada, big, { lifetimeMs: 30 * DAY + 1 }), refusals.sendLifetimeRefused("30 days", "server"));
    await refused(create(ada, big, { lifetimeMs: MIN - 1 }), refusals.sendLifetimeRefused("30 days", "server"));
    const capped = { forbidden: false, maxLifetimeMs: 7 * DAY };
    await refused(create(ada, big, { lifetimeMs: 8 * DAY, policy: capped }), refusals.sendLifetimeRefused("7 days", "policy"));
    await refused(create(ada, big, { policy: { forbidden: true, maxLifetimeMs: null } }), refusals.sendsForbidden());
    expect([await ids(ada), await ids(bob), await ids(cy)]).toEqual([[s.sendId], [], []]);
    // Each limit at its edge lets the send in: a member's count is theirs, the quota's room is exact.
    await create(bob, big, { limits: { ...quota, orgQuotaBytes: s.bytes + big.bytes, perUser: 1 }, lifetimeMs: 7 * DAY, policy: capped });
    expect(await ids(bob)).toEqual([big.sendId]);
  });

  test("sends: every refusal of a part, a finish, an open, a read and a delete, by its named constructor", async () => {
    const [ada, bob] = (await org(1)) as [Person, Person];
    const f = await sealSend(1000);
    await create(ada, f, { maxViews: 1 });
    const nobody = { ...f, sendId: newId<SendId>() };
    await refused(put(bob, f, 0), refusals.sendNotFound());
    await refused(put(ada, nobody, 0), refusals.sendNotFound());
    await refused(put(ada, f, 2, f.parts[1]), refusals.sendPartOutOfRange(2, 2));
    await put(ada, f, 0);
    await refused(put(ada, f, 1, new Uint8Array(f.parts[1]!.length + 1)), refusals.sendPartsTooLarge(f.bytes));
    await refused(finish(ada, f), refusals.sendIncomplete(1, 2));
    await refused(open(f), refusals.sendNotFound());
    await refused(read(f, 0), refusals.sendNotFound());
    await put(ada, f, 1);
    await refused(finish(bob, f), refusals.sendNotFound());
    await refused(finish(ada, nobody), refusals.sendNotFound());
    await finish(ada, f);
    await refused(put(ada, f, 1), refusals.sendFinished());
    await refused(put(bob, f, 1), refusals.sendNotFound());
    await refused(finish(bob, f), refusals.sendNotFound());
    await refused(open(f, { policy: { forbidden: true, maxLifetimeMs: null } }), refusals.sendNotFound());
    await open(f);
    await refused(open(f), refusals.sendNotFound());
    await refused(read(f, 1, { accessOk: false }), refusals.sendAccessInvalid());
    await refused(read(f, 2), refusals.sendPartOutOfRange(2, 2));
    expect(digest(await read(f, 1))).toBe(digest(f.parts[1]!));

    // Parts that fit the send's size but fall short of it.
    const short = await sealSend();
    await create(ada, { ...short, bytes: short.bytes + 10 });
    await put(ada, short, 0);
    await refused(finish(ada, short), refusals.sendIncomplete(null, 1));

    const expired = await sealSend();
    await make(ada, expired, { now: at(-2 * MIN), lifetimeMs: MIN });
    await refused(open(expired), refusals.sendNotFound());
    await refused(read(expired, 0), refusals.sendNotFound());

    const del = (p: Person, s: Sealed, events?: DomainEvent[]) =>
      store.sends.deleteSend({ actorId: p.userId, sendId: s.sendId, ...(events && { events }) });
    await refused(del(bob, f), refusals.sendNotFound());
    await refused(del(ada, nobody), refusals.sendNotFound());
    await del(ada, f);
    await del(ada, short);
    await refused(read(f, 1), refusals.sendNotFound());
    await refused(del(ada, f), refusals.sendNotFound());
    expect(await ids(ada)).toEqual([]);
  });

  test("sends: 30 opens at once of a send of one view: one answers and its part is gone; 20 of a send of five views: five answer (real concurrency)", async () => {
    const [ada] = (await org()) as [Person];
    // Connections open beforehand (on a store with a pool), so that the opens start together.
    await Promise.all(Array.from({ length: 10 }, () => list(ada)));
    const once = await sealSend();
    await make(ada, once, { maxViews: 1 });
    const before = at(-MIN);
    expect(digest(await read(once, 0, { now: before }))).toBe(digest(once.parts[0]!));
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, () => open(once)));
    const won = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    expect(won.map((o) => [o.viewsLeft, digest(o.header)])).toEqual([[0, digest(once.parts[0]!)]]);
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ message: refusals.sendNotFound().message });
    await refused(read(once, 0, { now: before }), refusals.sendNotFound());
    expect((await list(ada)).find((r) => r.sendId === once.sendId)).toMatchObject({ views: 1, partsGone: true });

    const five = await sealSend(100);
    await make(ada, five, { maxViews: 5 });
    const opens = await Promise.allSettled(Array.from({ length: 20 }, () => open(five)));
    const left = opens.flatMap((o) => (o.status === "fulfilled" ? [o.value.viewsLeft] : []));
    expect(left.sort()).toEqual([0, 1, 2, 3, 4]);
    expect((await list(ada)).find((r) => r.sendId === five.sendId)).toMatchObject({ views: 5, partsGone: false });
    // A file's opener has its access time to read the parts after the last view.
    expect(digest(await read(five, 1))).toBe(digest(five.parts[1]!));
  });

  test("sends: two makes at once that together pass the organization's quota: exactly one is made, each round (real concurrency)", async () => {
    const [ada, bob] = (await org(1)) as [Person, Person];
    await Promise.all(Array.from({ length: 4 }, () => list(ada)));
    const size = (await sealSend(500)).bytes;
    for (let round = 0; round < 6; round++) {
      const used = round * size;
      const limits = { ...LIMITS, orgQuotaBytes: used + size + Math.floor(size / 2) };
      const pair = await Promise.all([sealSend(500), sealSend(500)]);
      const outcomes = await Promise.allSettled(pair.map((s, i) => create(i === 0 ? ada : bob, s, { limits })));
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const full = refusals.sendQuotaFull(used + size, size, limits.orgQuotaBytes);
      for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ type: full.type, message: full.message });
    }
    expect((await list(ada)).length + (await list(bob)).length).toBe(6);
  });

  test("sends: the sweeper deletes expired sends and unfinished old ones with their parts, and a used-up file's parts once its access time passed", async () => {
    const [ada] = (await org()) as [Person];
    const staleBefore = at(-HOUR);
    // What earlier tests left for this sweep: the counts below are this test's own.
    await store.sends.purgeSends({ now: at(), staleBefore });
    const [expired, stale, fresh, kept, used] = await Promise.all([sealSend(), sealSend(10), sealSend(10), sealSend(), sealSend(10)]);
    const long = at(-2 * DAY);
    await make(ada, expired!, { now: long });
    await create(ada, stale!, { now: at(-2 * HOUR) });
    await put(ada, stale!, 0);
    await create(ada, fresh!);
    await put(ada, fresh!, 0);
    await make(ada, kept!, { now: at(-2 * HOUR) });
    await make(ada, used!, { maxViews: 1 });
    await open(used!);
    expect(digest(await read(expired!, 0, { now: at(-2 * DAY + MIN) }))).toBe(digest(expired!.parts[0]!));

    expect(await store.sends.purgeSends({ now: at(), staleBefore })).toBe(2);
    await refused(read(expired!, 0, { now: at(-2 * DAY + MIN) }), refusals.sendNotFound());
    expect(await ids(ada, at(-2 * DAY + MIN))).not.toContain(expired!.sendId);
    await refused(put(ada, stale!, 1), refusals.sendNotFound());
    await put(ada, fresh!, 1);
    expect((await open(kept!)).viewsLeft).toBeNull();
    expect(digest(await read(used!, 1))).toBe(digest(used!.parts[1]!));

    // Past the access time of the last view: the parts go, the send stays listed (parts gone) until it expires.
    const later = at(11 * MIN);
    expect(await store.sends.purgeSends({ now: later, staleBefore })).toBe(0);
    await refused(read(used!, 1), refusals.sendNotFound());
    await refused(read(used!, 0), refusals.sendNotFound());
    await refused(open(used!), refusals.sendNotFound());
    expect((await list(ada, later)).find((r) => r.sendId === used!.sendId)).toMatchObject({ views: 1, partsGone: true });
    expect(await ids(ada)).toEqual(expect.arrayContaining([fresh!.sendId, kept!.sendId, used!.sendId]));
  });

  test("sends: a member taken out of the organization loses every send, finished or not, and the organization the room they held", async () => {
    const [ada, bob] = (await org(1)) as [Person, Person];
    const [mine, theirs, unfinished] = await Promise.all([sealSend(), sealSend(10), sealSend(10)]);
    const limits = { ...LIMITS, orgQuotaBytes: mine.bytes + theirs.bytes + unfinished.bytes };
    await make(ada, mine, { limits });
    await make(bob, theirs, { limits });
    await create(bob, unfinished, { limits });
    await put(bob, unfinished, 0);
    await store.accounts.removeFromOrg({
      caller: { userId: ada.userId, orgId: ada.orgId, role: "owner" },
      targetId: bob.userId,
      now: at(),
    });
    expect(await ids(bob)).toEqual([]);
    await refused(open(theirs), refusals.sendNotFound());
    await refused(read(theirs, 1, { now: at(-MIN) }), refusals.sendNotFound());
    await refused(put(bob, unfinished, 1), refusals.sendNotFound());
    expect((await open(mine)).ownerId).toBe(ada.userId);
    const room = await sealSend(10);
    await create(ada, { ...room, bytes: theirs.bytes + unfinished.bytes }, { limits });
  });

  test("sends: a make, a first finish, an open and a delete write their events with them; a second finish and a refused open none", async () => {
    const [ada] = (await org()) as [Person];
    const s = await sealSend();
    const [made, finished, again] = [1, 2, 3].map(() => event("send.created", ada)) as [DomainEvent, DomainEvent, DomainEvent];
    const deleted = event("send.deleted", ada);
    await create(ada, s, { maxViews: 1, events: [made] });
    await put(ada, s, 0);
    await finish(ada, s, [finished]);
    await finish(ada, s, [again]);
    // Made for the send's owner and organization, as the audit record of an open names them.
    const openEvents: DomainEvent[] = [];
    const opening = (owner: Person) => {
      openEvents.push(event("send.opened", owner));
      return openEvents.slice(-1);
    };
    await open(s, { events: opening });
    await refused(open(s, { events: opening }), refusals.sendNotFound());
    expect(openEvents[0]).toMatchObject({ actorId: ada.userId, orgId: ada.orgId });
    await store.sends.deleteSend({ actorId: ada.userId, sendId: s.sendId, events: [deleted] });
    const out = new Set((await store.outbox.pending(100_000)).map((e) => e.eventId));
    expect([made, finished, again, deleted].map((e) => out.has(e.eventId))).toEqual([true, true, false, true]);
    expect(openEvents.map((e) => out.has(e.eventId))).toEqual([true, ...openEvents.slice(1).map(() => false)]);
  });
}
