export * from "./passkey";
export * from "./errors";
export { relyingPartyFor } from "./relying-party";
export {
  assertPasskey,
  createPasskey,
  passkeysFor,
  registrationFor,
  VAULT_AAGUID,
  type AssertionJSON,
  type AssertionRequest,
  type CreationRequest,
  type RegistrationJSON,
} from "./authenticator";
