/** The process's rekey slots (lib/limits/slots.ts: FairSlots), taken and given back under the fair-share rule. */
import { FairSlots } from "../../../../lib/limits/slots";

describe("fair rekey slots", () => {
  test("a slot released twice is given back once", () => {
    const slots = new FairSlots(4);
    const a = slots.take("org", "u1");
    expect("release" in a).toBe(true);
    if ("release" in a) {
      a.release();
      a.release();
    }
    expect(slots.held).toBe(0);
    const b = slots.take("org", "u1");
    const c = slots.take("org", "u2");
    expect(["release" in b, "release" in c, slots.held]).toEqual([true, true, 2]);
    expect(slots.take("org", "u3")).toEqual({ refusal: "organization-share" });
  });
});
