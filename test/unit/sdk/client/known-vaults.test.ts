/** What a device knows of its vaults against a new listing: missing vaults, moved names, what it knows after. */
import { knownAfter, knownChanges, sameKnown } from "../../../../sdk/client/known-vaults";

const ME = "00000000-0000-4000-8000-000000000001";
const BO = "00000000-0000-4000-8000-000000000002";

describe("knownChanges", () => {
  const known = {
    a: { name: "Passwords", namedBy: ME, createdBy: ME, vaultType: "shared" as const },
    b: { name: "Team", namedBy: BO, createdBy: BO },
    c: {},
  };

  test("a listing with every known vault changes nothing", () => {
    expect(knownChanges(ME, known, [{ vaultId: "a" }, { vaultId: "b" }, { vaultId: "c" }, { vaultId: "d", name: "New" }])).toEqual({
      missing: [],
      moved: [],
    });
  });

  test("a known vault left out is missing; its name on another vault is moved, marked when it was the user's own and someone else signed the name", () => {
    const { missing, moved } = knownChanges(ME, known, [
      { vaultId: "b", name: "Team" },
      { vaultId: "c" },
      { vaultId: "x", name: "Passwords", namedBy: BO },
    ]);
    expect(missing).toEqual([{ vaultId: "a", ...known.a }]);
    expect(moved).toEqual([{ name: "Passwords", knownId: "a", nowId: "x", namedBy: BO, takenFromYours: true }]);
  });

  test("a name only the server gives (unverified) moves nothing; the user's own signature on the other vault is not 'taken'", () => {
    expect(knownChanges(ME, known, [{ vaultId: "b" }, { vaultId: "c" }, { vaultId: "y" }]).moved).toEqual([]);
    expect(knownChanges(ME, known, [{ vaultId: "b" }, { vaultId: "c" }, { vaultId: "y", name: "Passwords", namedBy: ME }]).moved).toEqual([
      { name: "Passwords", knownId: "a", nowId: "y", namedBy: ME, takenFromYours: false },
    ]);
  });

  test("nothing known (a device of an earlier release): nothing missing", () => {
    expect(knownChanges(ME, {}, [{ vaultId: "a", name: "A" }])).toEqual({ missing: [], moved: [] });
  });
});

describe("knownAfter", () => {
  test("takes verified names, keeps a known name where the listing has none, and leaves forgotten vaults out", () => {
    const before = { a: { name: "Old", namedBy: ME, createdBy: ME }, b: { name: "Kept", namedBy: BO } };
    const after = knownAfter(
      before,
      [
        { vaultId: "a", name: "Renamed", namedBy: BO, createdBy: ME, vaultType: "shared" },
        { vaultId: "b" },
        { vaultId: "c" },
        { vaultId: "gone", name: "Gone" },
      ],
      new Set(["gone"]),
    );
    expect(after).toEqual({
      a: { name: "Renamed", namedBy: BO, createdBy: ME, vaultType: "shared" },
      b: { name: "Kept", namedBy: BO },
      c: {},
    });
    expect(sameKnown(after, { c: {}, b: { namedBy: BO, name: "Kept" }, a: after.a! })).toBe(true);
    expect(sameKnown(after, before)).toBe(false);
  });
});
