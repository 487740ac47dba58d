/** A process's slots for large bodies (lib/limits/slots.ts: FairSlots), taken and given back under the fair-share rule. */
import { FairSlots } from "../../../../lib/limits/slots";

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
});
