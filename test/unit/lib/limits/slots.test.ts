/** A process's slots for large bodies (lib/limits/slots.ts: FairSlots), taken and given back under the fair-share rule. */
import { FairSlots, type HeldSlot } from "../../../../lib/limits/slots";
import { sleep } from "../../../helpers/wait";

/** A slot taken at once (the test's setup: it must be). */
function held(slots: FairSlots, group: string, member: string): HeldSlot {
  const slot = slots.take({ group, member });
  if (!("release" in slot)) throw new Error(`no slot for ${member}: ${slot.refusal}`);
  return slot;
}

/** A slot whose body is arriving: it gives way by being released, as a read cut short is. */
function arriving(slots: FairSlots, group: string, member: string): { slot: HeldSlot; gaveWay: () => boolean; withdraw: () => void } {
  const slot = held(slots, group, member);
  let gave = false;
  const withdraw = slot.inTransfer(() => {
    gave = true;
    // The read ends with its error, and its handler gives the slot back.
    setImmediate(() => slot.release());
  });
  return { slot, gaveWay: () => gave, withdraw };
}

describe("fair slots", () => {
  test("a slot released twice is given back once", () => {
    const slots = new FairSlots(4);
    const a = slots.take({ group: "org", member: "u1" });
    expect("release" in a).toBe(true);
    if ("release" in a) {
      a.release();
      a.release();
    }
    expect(slots.held).toBe(0);
    const b = slots.take({ group: "org", member: "u1" });
    const c = slots.take({ group: "org", member: "u2" });
    expect(["release" in b, "release" in c, slots.held]).toEqual([true, true, 2]);
    expect(slots.take({ group: "org", member: "u3" })).toEqual({ refusal: "organization-share" });
  });

  test("a request past the user's share waits its turn and takes the slot its own earlier rekey releases", async () => {
    const slots = new FairSlots(4); // a quarter each: one slot per user
    const first = slots.take({ group: "org", member: "u1" });
    const waiting = slots.takeWithin({ group: "org", member: "u1" }, 5_000);
    setTimeout(() => "release" in first && first.release(), 50);
    const second = await waiting;
    expect("release" in second).toBe(true);
    expect(slots.held).toBe(1);
  });

  test("waiting is bounded: after the wait the share still used up is named; past its share of waiters a user is refused at once", async () => {
    const slots = new FairSlots(4);
    slots.take({ group: "org", member: "u1" });
    const started = Date.now();
    const [late, atOnce] = await Promise.all([
      slots.takeWithin({ group: "org", member: "u1" }, 100),
      slots.takeWithin({ group: "org", member: "u1" }, 100),
    ]);
    expect(late).toEqual({ refusal: "user-share" });
    expect(atOnce).toEqual({ refusal: "user-share" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    // Another user is not held up by u1's waiting.
    expect("release" in (await slots.takeWithin({ group: "org", member: "u2" }, 0))).toBe(true);
  });

  test("`starved` holds while a request waits for want of a free slot, not of its own share", async () => {
    const slots = new FairSlots(4); // two per organization, one per user
    slots.take({ group: "o1", member: "a" });
    const ownShare = slots.takeWithin({ group: "o1", member: "a" }, 100);
    expect(slots.starved).toBe(false);
    await ownShare;
    const b = slots.take({ group: "o1", member: "b" });
    slots.take({ group: "o2", member: "c" });
    slots.take({ group: "o2", member: "d" });
    const forRoom = slots.takeWithin({ group: "o3", member: "e" }, 5_000);
    expect(slots.starved).toBe(true);
    if ("release" in b) b.release();
    expect("release" in (await forRoom)).toBe(true);
    expect(slots.starved).toBe(false);
  });

  test("a body past its quantum gives its slot to another organization's waiter, which is served before a richer one's", async () => {
    const slots = new FairSlots(4, 300); // two per organization, one per user
    const bodies = [arriving(slots, "o1", "a"), arriving(slots, "o1", "b"), arriving(slots, "o2", "c"), arriving(slots, "o2", "d")];
    const served: string[] = [];
    const wait = (group: string, member: string) =>
      slots.takeWithin({ group, member }, 5_000).then((slot) => {
        served.push(member);
        return slot;
      });
    // o1 holds two already: its member waits on its organization's share, and came first.
    const richer = wait("o1", "e");
    const poorer = wait("o3", "f");
    await sleep(150);
    expect(bodies.map((b) => b.gaveWay())).toEqual([false, false, false, false]);
    expect("release" in (await poorer)).toBe(true);
    // The longest held body of an organization holding two gave way: o1's first. Then o1's member,
    // of an organization now holding one, waited for room in turn, and o2's first (of two) gave way to it.
    expect("release" in (await richer)).toBe(true);
    expect(served).toEqual(["f", "e"]);
    expect(bodies.map((b) => b.gaveWay())).toEqual([true, false, true, false]);
    expect(slots.held).toBe(4);
  });

  test("a body whose read is over, or a pool without a quantum, never gives way", async () => {
    for (const [slots, withdraw] of [
      [new FairSlots(1, 100), true],
      [new FairSlots(1), false],
    ] as const) {
      const body = arriving(slots, "o1", "a");
      if (withdraw) body.withdraw();
      await expect(slots.takeWithin({ group: "o2", member: "b" }, 400)).resolves.toEqual({ refusal: "process-full" });
      expect(body.gaveWay()).toBe(false);
    }
  });

  test("a waiter of an organization holding as many as the holders' does not take their slots", async () => {
    const slots = new FairSlots(2, 100); // one per organization, one per user
    const bodies = [arriving(slots, "o1", "a"), arriving(slots, "o2", "b")];
    // o2's second member: o2 holds its share already, so it waits on that, not for room.
    await expect(slots.takeWithin({ group: "o2", member: "c" }, 400)).resolves.toEqual({ refusal: "organization-share" });
    expect(bodies.map((b) => b.gaveWay())).toEqual([false, false]);
  });

  test("an organization that held slots of late is served after one that held none, though it waited longer", async () => {
    const slots = new FairSlots(2, 60_000); // one per organization
    const before = held(slots, "d", "d1");
    await sleep(100);
    before.release(); // d held a slot for 100 ms: what a ring of accounts giving their bodies up early would have
    held(slots, "a", "a1");
    const b = held(slots, "b", "b1");
    const busy = slots.takeWithin({ group: "d", member: "d2" }, 500);
    await sleep(20);
    const fresh = slots.takeWithin({ group: "c", member: "c1" }, 500);
    await sleep(20);
    b.release();
    expect("release" in (await fresh)).toBe(true);
    await expect(busy).resolves.toEqual({ refusal: "process-full" });
  });

  test("a body past its quantum keeps its slot from an organization that used more of late, and gives it to one that used less", async () => {
    const slots = new FairSlots(2, 200); // one per organization
    const ring = held(slots, "ring", "r1");
    await sleep(600);
    ring.release(); // the ring's organization held a slot for 600 ms of late
    const slow = arriving(slots, "victim", "v1");
    held(slots, "other", "o1");
    await sleep(300); // past its quantum, but used less than the ring
    await expect(slots.takeWithin({ group: "ring", member: "r2" }, 300)).resolves.toEqual({ refusal: "process-full" });
    expect(slow.gaveWay()).toBe(false);
    // An organization that held nothing of late: the slow body has used more, and gives way.
    expect("release" in (await slots.takeWithin({ group: "fresh", member: "f1" }, 1_000))).toBe(true);
    expect(slow.gaveWay()).toBe(true);
  });

  test("a client refused after its wait that asks again keeps its place ahead of requests queued since", async () => {
    const slots = new FairSlots(1); // one slot
    const holder = held(slots, "h", "h1");
    // The victim waits, is refused, and asks again a moment later.
    await expect(slots.takeWithin({ group: "victim", member: "v1" }, 150)).resolves.toEqual({ refusal: "process-full" });
    const twin = slots.takeWithin({ group: "twin", member: "t1" }, 2_000); // queued in the gap, before the victim's next request
    await sleep(50);
    const again = slots.takeWithin({ group: "victim", member: "v1" }, 2_000);
    await sleep(20);
    holder.release();
    expect("release" in (await again)).toBe(true);
    await expect(twin).resolves.toEqual({ refusal: "process-full" });
  });
});
