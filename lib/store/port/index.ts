/**
 * The store port: the domain-level operations the services need, and nothing of a driver, one
 * interface per aggregate (the file of the same name in this folder). Every adapter (sql/ on
 * SQLite or PostgreSQL, mongo/) implements each in its file of the same name, and passes the same
 * contract suite (test/contract/store.contract.ts).
 *
 * Arguments are named (`removeMember({ vaultId, actorId, targetId, now })`), never two ids side by
 * side. Every refusal is an AppError (lib/errors.ts).
 */
import type { AccountStore } from "./accounts";
import type { AttachmentStore } from "./attachments";
import type { AuditStore } from "./audit";
import type { EmergencyStore } from "./emergency";
import type { Housekeeping } from "./housekeeping";
import type { InviteStore } from "./invites";
import type { ItemStore } from "./items";
import type { OrgLogStore } from "./org-log";
import type { OutboxStore } from "./outbox";
import type { SecurityStore } from "./security";
import type { SendStore } from "./sends";
import type { SessionStore } from "./sessions";
import type { VaultStore } from "./vaults";

export interface Store {
  accounts: AccountStore;
  sessions: SessionStore;
  vaults: VaultStore;
  items: ItemStore;
  attachments: AttachmentStore;
  sends: SendStore;
  emergency: EmergencyStore;
  invites: InviteStore;
  orgLog: OrgLogStore;
  audit: AuditStore;
  outbox: OutboxStore;
  housekeeping: Housekeeping;
  security: SecurityStore;
  close(): Promise<void>;
}

/** The named arguments of a port method, for its implementations: `ArgsOf<VaultStore["removeMember"]>`. */
export type ArgsOf<F> = F extends (args: infer A) => unknown ? A : never;

/** The aggregates, in the order the adapters build them. */
export const AGGREGATES = [
  "accounts",
  "sessions",
  "vaults",
  "items",
  "attachments",
  "sends",
  "emergency",
  "invites",
  "orgLog",
  "audit",
  "outbox",
  "housekeeping",
  "security",
] as const satisfies ReadonlyArray<keyof Store>;

export type * from "./accounts";
export type * from "./attachments";
export type * from "./sends";
export type * from "./emergency";
export type * from "./audit";
export type * from "./housekeeping";
export type * from "./invites";
export type * from "./items";
export type * from "./org-log";
export type * from "./outbox";
export type * from "./security";
export type * from "./sessions";
export type * from "./vaults";
