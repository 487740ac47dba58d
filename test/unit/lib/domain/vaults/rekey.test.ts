/** A rekey's sets (lib/domain/vaults/rekey.ts): exactly the current members and items, at the next key version. */
import type { ItemId } from "../../../../../lib/domain/ids";
import { assertExactItemSet, assertExactMemberSet, assertItemRevisions, assertKeyVersion } from "../../../../../lib/domain/vaults/rekey";
import {
  itemChangedSinceRead,
  keyVersionMismatch,
  missingFromSet,
  notInVault,
  twiceInSet,
} from "../../../../../lib/domain/vaults/refusals";
import { asRefusal, code, outcomeOf } from "../../../../helpers/refusal";

describe("rekey sets", () => {
  test("exactly the current members and items: none missing, none extra, no duplicates", () => {
    expect(code(() => assertExactMemberSet(["a", "b"], ["b", "a"]))).toBe("ok");
    expect(outcomeOf(() => assertExactMemberSet(["a", "b"], ["a"]))).toEqual(asRefusal(missingFromSet("member", 1, "newKeys")));
    expect(outcomeOf(() => assertExactMemberSet(["a", "b"], ["a", "b", "c"]))).toEqual(asRefusal(notInVault("member", "c", "newKeys")));
    expect(outcomeOf(() => assertExactMemberSet(["a", "b"], ["a", "a"]))).toEqual(asRefusal(twiceInSet("member", "a", "newKeys")));
    expect(code(() => assertExactItemSet([], []))).toBe("ok");
    expect(outcomeOf(() => assertExactItemSet(["x"], ["x", "x"]))).toEqual(asRefusal(twiceInSet("item", "x", "items")));
    expect(outcomeOf(() => assertExactItemSet(["x", "y"], ["x"]))).toEqual(asRefusal(missingFromSet("item", 1, "items")));
    expect(code(() => assertKeyVersion(2, undefined))).toBe("ok");
    expect(outcomeOf(() => assertKeyVersion(2, 1))).toEqual(asRefusal(keyVersionMismatch(2, 1)));
  });

  test("each item re-encrypted from its stored revision, when the client states one", () => {
    const x = "x" as ItemId;
    const stored = new Map([["x", 3]]);
    expect(code(() => assertItemRevisions(stored, [{ itemId: x, revision: 3 }]))).toBe("ok");
    expect(code(() => assertItemRevisions(stored, [{ itemId: x }]))).toBe("ok");
    expect(outcomeOf(() => assertItemRevisions(stored, [{ itemId: x, revision: 2 }]))).toEqual(asRefusal(itemChangedSinceRead("x", 3, 2)));
  });
});
