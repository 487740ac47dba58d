/** Domain events off the queue (lib/domain/audit/events.ts: parseDomainEvent): a domain event, or null for poison. */
import { parseDomainEvent } from "../../../../../lib/domain/audit/events";
import { event } from "../../../../helpers/domain-event";

describe("events off the queue", () => {
  test("a domain event passes, unknown fields dropped; anything else is poison", () => {
    const e = event();
    expect(parseDomainEvent({ ...e, token: "secret" })).toEqual(e);
    for (const bad of [
      null,
      "x",
      42,
      { ...e, eventId: "1" },
      { ...e, type: "user.deleted" },
      { ...e, at: "yesterday" },
      { ...e, vaultId: 7 },
      { ...e, orgId: undefined },
    ]) {
      expect(parseDomainEvent(bad)).toBeNull();
    }
  });
});
