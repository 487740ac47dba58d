/** Ids (lib/domain/ids.ts): a UUID in its one written form, nothing else. */
import { isUuid } from "../../../../lib/domain/ids";

test("UUIDs", () => {
  expect(isUuid("0e3f4a1c-2b5d-4c6e-8f70-123456789abc")).toBe(true);
  expect(isUuid("0e3f4a1c2b5d4c6e8f70123456789abc")).toBe(false);
  expect(isUuid("../etc/passwd")).toBe(false);
});
