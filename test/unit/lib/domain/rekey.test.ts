/** A rekey's sets (lib/domain/rekey.ts): exactly the current members and items, at the next key version. */
import { assertExactItemSet, assertExactMemberSet, assertKeyVersion } from "../../../../lib/domain/rekey";
import { code } from "../../../helpers/refusal";

describe("rekey sets", () => {
  test("exactly the current members and items: none missing, none extra, no duplicates", () => {
    expect(code(() => assertExactMemberSet(["a", "b"], ["b", "a"]))).toBe("ok");
    expect(code(() => assertExactMemberSet(["a", "b"], ["a"]))).toBe("INVALID");
    expect(code(() => assertExactMemberSet(["a", "b"], ["a", "b", "c"]))).toBe("INVALID");
    expect(code(() => assertExactMemberSet(["a", "b"], ["a", "a"]))).toBe("INVALID");
    expect(code(() => assertExactItemSet([], []))).toBe("ok");
    expect(code(() => assertExactItemSet(["x"], ["x", "x"]))).toBe("INVALID");
    expect(code(() => assertKeyVersion(2, undefined))).toBe("ok");
    expect(code(() => assertKeyVersion(2, 1))).toBe("CONFLICT");
  });
});
