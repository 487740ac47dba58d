/**
 * The namespaces of `VaultClient`, one file each: `client.sessions`, `client.keys`,
 * `client.people`, `client.vaults`, `client.members`, `client.items`, `client.attachments`, `client.invites`,
 * `client.audit`. Each is an interface (what a caller may do, with its doc comments) and the
 * function that builds it over the client's parts (../parts.ts); ids a caller passes are lowered
 * here, once (ids.ts).
 */
export { attachmentsApi, type AttachmentsApi } from "./attachments";
export { auditApi, type AuditApi } from "./audit";
export { invitesApi, type InvitesApi } from "./invites";
export { itemsApi, type ItemsApi } from "./items";
export { keysApi, type KeysApi } from "./keys";
export { membersApi, type MembersApi } from "./members";
export { peopleApi, type PeopleApi } from "./people";
export { sessionsApi, type SessionsApi } from "./sessions";
export { vaultsApi, type VaultsApi } from "./vaults";
