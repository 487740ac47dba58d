/** A domain event for the audit, event and queue rules' tests: a new `item.created` in one organization, fields overridable. */
import { newId, type ItemId, type OrgId, type UserId, type VaultId } from "../../lib/domain/ids";
import type { DomainEvent } from "../../lib/domain/audit/events";

const ORG = newId<OrgId>();
export const event = (extra: Partial<DomainEvent> = {}): DomainEvent => ({
  eventId: newId(),
  type: "item.created",
  at: new Date().toISOString(),
  actorId: newId<UserId>(),
  orgId: ORG,
  vaultId: newId<VaultId>(),
  itemId: newId<ItemId>(),
  ...extra,
});
