/**
 * The MongoDB adapter's documents: one type per collection (the counterpart of `sql/schema.ts`)
 * and the mappings between documents and the port's records (the counterpart of the `to*`
 * functions in the `sql/` aggregate files), one file per aggregate. Pure: unit-tested without a server.
 */
export * from "./accounts";
export * from "./attachments";
export * from "./audit";
export * from "./emergency";
export * from "./items";
export * from "./security";
export * from "./sends";
export * from "./vaults";

/** Collection names, mirroring the SQL tables. */
export const COLLECTIONS = {
  orgs: "orgs",
  users: "users",
  vaults: "vaults",
  members: "vault_members",
  items: "items",
  itemRevisions: "item_revisions",
  itemTrash: "item_trash",
  itemChanges: "item_changes",
  invites: "invites",
  refreshTokens: "refresh_tokens",
  sessions: "sessions",
  rememberedDevices: "remembered_devices",
  keyLog: "key_log",
  orgLog: "org_log",
  locks: "locks",
  auditEvents: "audit_events",
  auditHeads: "audit_heads",
  rosterLinks: "roster_links",
  itemLinks: "item_links",
  serverKeys: "server_keys",
  outbox: "outbox",
  secondFactors: "second_factors",
  recoveryCodes: "recovery_codes",
  orgPolicies: "org_policies",
  recoveryEnrolments: "recovery_enrolments",
  recoveryShares: "recovery_shares",
  recoveryRequests: "recovery_requests",
  recoveryApprovals: "recovery_approvals",
  passkeyLogins: "passkey_logins",
  attachments: "attachments",
  attachmentChunks: "attachment_chunks",
  sends: "sends",
  sendParts: "send_parts",
  emergencyGrants: "emergency_grants",
} as const;

/** A document whose only job is to be written by transactions that must not overlap. */
export interface LockDoc {
  _id: string;
  seq: number;
}
