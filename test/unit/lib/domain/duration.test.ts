/** Durations (lib/domain/duration.ts): `<positive integer><s|m|h|d>` in, milliseconds or null out. */
import { parseDuration } from "../../../../lib/domain/duration";

test("expiresIn is <positive integer><s|m|h|d>", () => {
  expect(parseDuration("24h")).toBe(86_400_000);
  expect(parseDuration("1s")).toBe(1000);
  expect(parseDuration("30d")).toBe(30 * 86_400_000);
  for (const bad of ["0h", "-1h", "1.5h", "h", "24", "24H", "1w", " 1h", "01h"]) expect(parseDuration(bad)).toBeNull();
});
