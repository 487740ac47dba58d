/**
 * The client SDK of the vault service: WebCrypto only (Node 22+ and current browsers), plus
 * Argon2id in WebAssembly. Start with `VaultClient`; the primitives are exported for auditing
 * and interop tests.
 */
export { VaultClient } from "./client";
export type {
  Account,
  AuditRecord,
  Invite,
  Item,
  MemberEntry,
  OrgRole,
  RekeyProgress,
  RekeyResult,
  StoredItem,
  Vault,
  VaultClientOptions,
  VaultRole,
  VaultVerification,
  VerifiedRoster,
  WrapCheck,
} from "./client";
export { ApiError, SecurityError, UnlockError, WeakPasswordError, type SecurityProblem } from "./errors";
export { checkMasterPassword, MIN_MASTER_PASSWORD_LENGTH, MIN_MASTER_PASSWORD_SCORE, type PasswordVerdict } from "./password-strength";
export { Transport, type Tokens, type TransportOptions } from "./http";
export { itemAssociatedData, openItem, sealItem, type ItemContent, type SealedItem } from "./items";
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
} from "./keys";
export { MemoryPinStore, MemoryRosterHeadStore, type KeptValues, type PinStore, type RosterHead, type RosterHeadStore } from "./pins";
export * as roster from "./roster";
export type { RosterLink, RosterState, UnsignedLink } from "./roster";
export * as primitives from "./primitives";
export type { Argon2idParams, KdfParams, Pbkdf2Params } from "./primitives";
export * as encoding from "./encoding";
export { generatePassword, PASSWORD_ALPHABET } from "./passwords";
export { EmailError, normalizeEmail } from "./email";
export { describeLink } from "./describe";
