/**
 * The client SDK of the vault service: WebCrypto only (Node 22+ and current browsers), plus
 * Argon2id in WebAssembly. Start with `VaultClient`; the primitives are exported for auditing
 * and interop tests.
 */
export { ProtectionInterruptedError, VaultClient } from "./client";
// A login kept on a device between visits, its tokens sealed under a key only the master password gives (sdk/client/kept-session.ts).
export { WEB_SESSION_SEAL_CONTEXT, isKeptSession, openKept, sealKept, type KeptSession, type SealKey } from "./client";
export type { RememberedDeviceInfo } from "./client/api/sessions";
// Passkeys that sign in to the account and, with the PRF, unlock it (sdk/client/passkey-logins.ts).
export type { PasskeyAuthenticator, PasskeyLoginInfo, PasskeySignInPolicy, PasskeySignInResult } from "./client";
// The client's namespaces (client.vaults, client.items, ...), each an interface (sdk/client/api/).
export type { AuditApi, InvitesApi, ItemsApi, KeysApi, MembersApi, PeopleApi, SessionsApi, VaultsApi } from "./client";
export type {
  Account,
  AuditRecord,
  CheckedInvite,
  CheckedMember,
  CheckedVault,
  CreatedInvite,
  Invite,
  Item,
  ItemRevision,
  MemberEntry,
  NameCheck,
  OrgMember,
  OrgRole,
  AdoptConfirmation,
  RekeyOptions,
  RekeyProgress,
  RekeyResult,
  Removal,
  RemovalFinished,
  SignedMember,
  PasswordChangeResult,
  ProtectedVault,
  ProtectionProgress,
  ProtectionResult,
  ProtectionStep,
  RecoveryRenewal,
  VaultLeft,
  SessionInfo,
  ServedBundle,
  StoredItem,
  TrashedItem,
  TrustLevel,
  Vault,
  VaultClientOptions,
  VaultRole,
  VaultVerification,
  VerifiedRoster,
  WrapCheck,
  FactorInfo,
  LockOutPolicy,
  Policies,
  SecondFactorAnswer,
  SecondFactorChallenge,
  SecondFactorPrompt,
  PendingRecovery,
  RecoveryTask,
  ImportedVault,
  PendingUpload,
  UploadOptions,
  TransferProgress,
  VaultPerFolderResult,
} from "./client";
export { ApiError, SecondFactorRequiredError, SecurityError, UnlockError, WeakPasswordError, type SecurityProblem } from "./errors";
export { InputError, sentence } from "./error-text";
export { VaultListChanged } from "./client/vaults";
export type { MissingVault, MovedName } from "./client/known-vaults";
export { checkMasterPassword, MIN_MASTER_PASSWORD_LENGTH, MIN_MASTER_PASSWORD_SCORE, type PasswordVerdict } from "./password-strength";
export { Transport, type Tokens, type TransportOptions } from "./http";
export { completeItemUrl, itemAssociatedData, openableUrl, openItem, sealItem, type ItemContent, type SealedItem } from "./items";
export {
  ITEM_TYPES,
  TYPE_FIELDS,
  TYPE_LABELS,
  URL_MATCHES,
  itemUrls,
  type CustomField,
  type ItemType,
  type ItemUrl,
  type TypeField,
  type UrlMatch,
} from "./item-types";
export type { ItemAttachment } from "./attachments/attachment";
export { apiUrlOfLink, needsSendPassword, openSend, type OpenedSend, type OpenSendOptions } from "./sends/open";
export { parseSendLink } from "../protocol/formats/sends";
export type { AttachmentSource, RangeReader } from "./attachments/source";
// TOTP codes and search are imported from their own modules (sdk/totp.ts, sdk/search.ts), so that the web vault loads them only when used.
export type { TotpCode } from "./totp";
export type { ItemSearch, SearchHit, SearchableItem } from "./search";
export { exposureOf, membershipsOf, type ExposureItem, type ExposureReport, type Membership } from "./exposure";
export { DEFAULT_OLD_AFTER_DAYS, passwordHealth, type HealthCounts, type HealthProblem, type HealthReport } from "./health";
// Import and export formats likewise (sdk/transfer/index.ts).
export type { ExportFormat, ImportFormat, Parsed } from "./transfer";
export {
  bundleFingerprint,
  bundleSelfSignatureVerifies,
  groupedFingerprint,
  keyFingerprint,
  createAccountKeys,
  deriveAccountSecrets,
  DEFAULT_ARGON2ID,
  DEFAULT_PBKDF2,
  newKdfParams,
  openAccountKeys,
  type AccountKeys,
  type DeriveMasterKey,
  type KdfChoice,
  type PublicKeyBundle,
  type RegistrationKeys,
  type StoredAccountKeys,
} from "../protocol/crypto/keys";
export {
  asPin,
  MemoryPinStore,
  MemoryRosterHeadStore,
  MemoryValues,
  type InviteSecret,
  type InviteSecretStore,
  type KdfMemory,
  type KeptValues,
  type KnownVault,
  type KnownVaultStore,
  type Pin,
  type PinSource,
  type PinStore,
  type RememberedKdf,
  type RosterHead,
  type RosterHeadStore,
} from "./pins";
export { checkKdf, KDF_CAPS, KDF_FLOOR, sameKdf } from "../protocol/crypto/kdf";
export * as statements from "../protocol/formats/statements";
export { parseInviteCode, type InviteCode, type SignedStatement } from "../protocol/formats/statements";
export * as roster from "../protocol/formats/roster";
export type { RosterLink, RosterState, UnsignedLink } from "../protocol/formats/roster";
export { replayRoster, type SignerKeys } from "../protocol/formats/roster-replay";
export * as primitives from "../protocol/crypto/primitives";
export type { Argon2idParams, KdfParams, Pbkdf2Params } from "../protocol/crypto/primitives";
export * as encoding from "../protocol/encoding";
export { generatePassword, PASSWORD_ALPHABET } from "./passwords";
export { EmailError, normalizeEmail } from "../protocol/email";
export { deviceNameProblem, MAX_DEVICE_NAME, printable } from "../protocol/names";
export {
  GRANTABLE_ROLES,
  mayDo,
  mayRemoveMember,
  VAULT_ROLES,
  VAULT_TYPES,
  type GrantableRole,
  type VaultAction,
  type VaultType,
} from "../protocol/vault-roles";
export { managesOrg, mayBeTrustee, mayChangePolicies, mayRemoveFromOrg, ORG_ROLES } from "../protocol/org-roles";
export { describeLink } from "./describe";
export type { CheckedAuditLog } from "./client/audit";
export { checkAuditChain, verifyAuditExport, type AuditCheckpoint, type AuditExport } from "../protocol/formats/audit";
