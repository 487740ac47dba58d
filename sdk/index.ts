/**
 * The client SDK of the vault service: WebCrypto only (Node 22+ and current browsers), plus
 * Argon2id in WebAssembly. Start with `VaultClient`; the primitives are exported for auditing
 * and interop tests.
 */
export { VaultClient } from "./client";
export type {
  Account, Invite, Item, MemberEntry, OrgRole, RekeyProgress, RekeyResult, StoredItem, Vault, VaultClientOptions,
  VaultRole, VaultVerification, WrapCheck,
} from "./client";
export { ApiError, SecurityError, UnlockError, type SecurityProblem } from "./errors";
export { Transport, type Tokens, type TransportOptions } from "./http";
export { itemAssociatedData, openItem, sealItem, type ItemContent, type SealedItem } from "./items";
export {
  bundleFingerprint, bundleSelfSignatureVerifies, createAccountKeys, deriveAccountSecrets, DEFAULT_ARGON2ID, DEFAULT_PBKDF2,
  newKdfParams, openAccountKeys, type AccountKeys, type KdfChoice, type PublicKeyBundle, type RegistrationKeys,
  type StoredAccountKeys,
} from "./keys";
export { MemoryPinStore, type PinStore } from "./pins";
export * as primitives from "./primitives";
export type { Argon2idParams, KdfParams, Pbkdf2Params } from "./primitives";
export * as encoding from "./encoding";
