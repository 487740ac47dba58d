/**
 * Named refusals of accounts: each constructor is the one place a refusal's code, message and field
 * are written, and each is thrown by one rule of this folder. Grep a name to find its rule and its
 * test; the error body keeps the contract's shape (`{ error: { code, message, field? } }`).
 */
import { AppError, conflict, forbidden, invalid, notFound, unauthorized } from "../../errors";

// ---- Registration and invites ---------------------------------------------------------------

/** The server takes no registrations (REGISTRATION_MODE=disabled). */
export const registrationDisabled = () => forbidden("Registration is disabled on this server");

/** REGISTRATION_MODE=invite, the server has users, and the request carries no invite. */
export const inviteRequired = () => forbidden("Registration needs an invite");

// ---- Rate limits ----------------------------------------------------------------------------

/** Past a per-address limit: `429` with its message and the seconds until the window ends. */
export const rateLimited = (message: string, retryAfterSec: number) => new AppError("RATE_LIMITED", message, { retryAfterSec });

// ---- Keys, statements and formats -----------------------------------------------------------

/** publicKey is not an SPKI DER public key. */
export const notSpkiKey = () => invalid("publicKey is not an SPKI DER public key", "publicKey");

/** An RSA key outside 2048 to 4096 bits, or another exponent than 65537. */
export const rsaKeyOutOfRange = () => invalid("publicKey must be an RSA key of 2048 to 4096 bits with exponent 65537", "publicKey");

/** An SPKI that is not in its one canonical DER form. */
export const notCanonicalSpki = () => invalid("publicKey is not in canonical SPKI DER form", "publicKey");

/** A signing key of another length than 32 bytes. */
export const badEd25519Length = () => invalid("signingPublicKey must be 32 raw Ed25519 bytes", "signingPublicKey");

/** 32 bytes that are not an Ed25519 public key. */
export const notEd25519Key = () => invalid("signingPublicKey is not an Ed25519 public key", "signingPublicKey");

/** The bundle's RSA key is not signed by its Ed25519 key. */
export const badKeySignature = () => invalid("publicKeySignature does not verify over publicKey", "publicKeySignature");

/** A wrapped private key of no bytes or past 16 KiB. */
export const badPrivateBlob = (field: string) => invalid(`${field} must be 1 byte to 16 KiB`, field);

/** A KDF salt outside its length bounds. */
export const badSalt = (min: number, max: number) => invalid(`kdf.salt must be ${min} to ${max} bytes`, "salt");

/** A KDF parameter below the floor or past the cap (protocol/crypto/kdf.ts). */
export const badKdfParameter = (what: string, min: number, max: number, field: string) =>
  invalid(`${what} must be ${min} to ${max}`, field);

/** A signed statement of another version than this server's. */
export const badStatementVersion = (what: string, version: number, field: string) =>
  invalid(`${what} must have version ${version}`, `${field}.version`);

/** A statement that does not verify over its holder's fields. */
export const badStatementSignature = (what: string, field: string) =>
  invalid(`${what} does not verify with the signing key for this user id, email and keys`, `${field}.signature`);

/** An invite binding without the invite it answers. */
export const bindingWithoutInvite = () => invalid("inviteBinding comes only with an inviteToken", "inviteBinding");

/** An invite binding that is not a 32-byte tag. */
export const badBindingTag = () => invalid("inviteBinding must be an HMAC-SHA256 tag (32 bytes)", "inviteBinding");

// ---- Who sees what --------------------------------------------------------------------------

/** The access token's user no longer exists. */
export const tokenUserGone = () => unauthorized("The token's user no longer exists");

// ---- Access tokens the server's key signed, refused for what they claim (access-tokens.ts) ----

/** A token that names no signing key (`kid`), or one this server does not hold (or no longer accepts). */
export const tokenKeyUnknown = () => unauthorized("Invalid or expired access token: it names no signing key this server accepts");

/** A token issued later than now (beyond MAX_CLOCK_SKEW_SEC): no node of this server issued it. */
export const tokenFromTheFuture = () => unauthorized("Invalid access token: it was issued in the future");

/** A token that lives longer than the settings give an access token (ACCESS_TOKEN_TTL): refresh it. */
export const tokenOutlivesItsLifetime = (lifetimeSec: number) =>
  unauthorized(`Invalid access token: it lives longer than this server's ${lifetimeSec} s; refresh it`);

/** A token of someone taken out of their organization: it stops at once, as their sessions do. */
export const tokenHolderRemoved = () => unauthorized("This account was removed from its organization");

/** A token whose organization or role is not its user's now: refresh it. */
export const tokenClaimsStale = () => unauthorized("This access token's organization or role is not the account's: refresh it");

/** A login with the wrong email or password (the one answer for both). */
export const wrongEmailOrPassword = () => unauthorized("Wrong email or password");

/** A refresh token that is no login's, expired, or reused (which revokes the login). */
export const badRefreshToken = (reused: boolean) =>
  unauthorized(reused ? "Refresh token reused; the login was revoked" : "Invalid or expired refresh token");

/** A refresh token whose user is gone. */
export const refreshUserGone = () => unauthorized("Invalid refresh token");

/** An argon2id KDF without one of its parameters. */
export const kdfParameterMissing = (field: "memoryKiB" | "parallelism") => invalid(`argon2id needs ${field}`, field);

/** A statements upgrade that gives neither statement. */
export const noStatementGiven = () => invalid("Give keyStatement, kdfStatement or both", "keyStatement");

// ---- Sessions -------------------------------------------------------------------------------

/** A device name that is empty, too long, or holds characters that do not print. */
export const badDeviceName = () =>
  invalid("deviceName must be 1 to 64 printable characters (no control or direction-override characters)", "deviceName");

/** An access token from before sessions: its holder refreshes it (the refresh token's session is recorded then). */
export const tokenWithoutSession = () => unauthorized("This access token names no session: refresh it");

/** The access token's session was ended (logout, a revocation, a password change) or expired. */
export const sessionEnded = () => unauthorized("This session has ended");

/** The access token's session was ended because the account's second factors changed (on another device, or a policy). */
export const sessionEndedByFactorChange = () =>
  unauthorized("This session has ended: the account's second factors were changed from another session; sign in again");

/** A login whose password was compared just before a password change swapped it: it starts no session. */
export const passwordChangedMeanwhile = () => unauthorized("The master password changed meanwhile; log in again");

/** A session to end that is not one of the caller's live sessions. */
export const sessionNotFound = () => notFound("Session");

// ---- Master password change -----------------------------------------------------------------

/** The current master password's auth hash does not match (counted, like a failed login). */
export const wrongCurrentPassword = () => forbidden("The current master password is not right");

/** The client changed the password from an older read of the account: it must sync and start over. */
export const staleAccountVersion = (current: number, stated: number) =>
  conflict(`The account's key version is ${current}, not ${stated}: another change came first; read the account again`, "accountVersion");

/** The request does not re-wrap exactly the user's personal vaults (one was made or deleted meanwhile). */
export const personalVaultsChanged = (missing: number, extra: number) =>
  conflict(
    `The request must re-wrap exactly your personal vaults (${missing} missing, ${extra} not yours or not personal): read them again`,
    "vaults",
  );

/** An account at its cap of personal vaults (a password change re-wraps them all in one request). */
export const tooManyPersonalVaults = (max: number) =>
  invalid(`An account holds at most ${max} personal vaults (a password change wraps them all again at once)`, "type");

/** A personal vault named twice. */
export const vaultNamedTwice = () => invalid("Each personal vault is named once", "vaults");

/** A personal-vault write states an account key version other than the account's (its wrap is under another stretched key). */
export const wrapUnderOldPassword = (current: number, stated: number) =>
  conflict(
    `This wrap is under the stretched key of account version ${stated}, the account is at ${current}: the master password changed; log in again`,
    "accountVersion",
  );

// ---- Key rotation ---------------------------------------------------------------------------

/** The new key-log entry is not for the caller's account. */
export const rotationKeysMismatch = (field: string) => invalid("The key log entry is not for your account", `keyLogEntry.${field}`);

/** The entry does not follow the stored head of the key log: another rotation came first. */
export const keyLogEntryStale = (headVersion: number) =>
  conflict(
    `The key log is at version ${headVersion}: the entry must be version ${headVersion + 1} with prev its hash; another rotation came first, read the log again`,
    "keyLogEntry",
  );

/** The step is not signed as the log requires (by the current key and by the new one), or the log is full. */
export const keyLogStepRefused = (field: string, why: string) => invalid(`Key log entry: ${why}`, `keyLogEntry.${field}`);

/** The new keys are keys this account had before: a rotation moves to keys never used. */
export const keysUsedBefore = () =>
  invalid("These keys were used before by this account: a rotation moves to new keys", "keyLogEntry.publicKey");

/** A write made with keys the account rotated away from while it was on its way. */
export const keysRotatedMeanwhile = () =>
  conflict("Your keys were rotated meanwhile: this was made with the old ones; log in again and retry", "encryptedVaultKey");

/** A vault named twice in a rotation. */
export const rotationVaultNamedTwice = () => invalid("Each vault is named once", "vaults");

/** The rotation does not re-wrap exactly the vaults the user is a member of (one was shared with them or left meanwhile). */
export const rotationVaultsChanged = (missing: number, extra: number) =>
  conflict(
    `The request must wrap the key of exactly the vaults you are a member of (${missing} missing, ${extra} not yours): read them again`,
    "vaults",
  );

/** The wraps re-signed in a vault are not exactly the ones the user made for others there. */
export const resignedWrapsMismatch = (vaultId: string) =>
  conflict(
    `In vault ${vaultId}, the request must sign again exactly the wraps you made for others (one was made or replaced meanwhile): read it again`,
    "vaults.resigned",
  );

// ---- Second factors -------------------------------------------------------------------------

/**
 * A login's second step with a wrong code, a replayed code, a used recovery code, a security key
 * that did not sign the challenge, or after a wrong password: one answer for all of them, so that
 * neither step tells a right password from a wrong one.
 */
export const wrongPasswordOrCode = () => unauthorized("Wrong password or second-factor code");

/** A pending second step that was tried too often, expired or was used: the login starts again. */
export const tooManyStepTries = () => unauthorized("This sign-in expired or was tried too often: sign in again");

/** A factor's name that would not print honestly. */
export const badFactorName = () => invalid("name must be 1 to 64 printable characters", "name");

/** A second TOTP authenticator (one replaces the other: remove the old one first). */
export const totpAlreadyEnrolled = () => conflict("An authenticator app is already enrolled: remove it first");

/** More security keys and passkeys than an account keeps. */
export const tooManyFactors = (max: number) => conflict(`An account keeps at most ${max} security keys and passkeys`);

/** The last factor of an account whose organization requires one. */
export const lastFactorRequired = () => forbidden("Your organization requires a second factor: enrol another before removing this one");

/** A factor that is not the caller's. */
export const factorNotFound = () => notFound("Second factor");

/** An enrolment whose code or security-key answer did not check out (or whose setup expired). */
export const factorNotConfirmed = (field: string) =>
  invalid("The code or security-key answer does not match this setup (or the setup expired): try again", field);

/** A change of the account's second factors without the master password's proof (`currentAuthHash`). */
export const passwordProofRequired = () =>
  invalid("Changing your second factors takes your master password: give currentAuthHash", "currentAuthHash");

/** The proof given under both its names (`currentAuthHash`, and `authHash` as earlier clients send it). */
export const passwordProofGivenTwice = () => invalid("Give the master password's proof once, as currentAuthHash", "authHash");

/** A factor's setup (an authenticator-app secret, a security-key challenge) that enrolled a factor already. */
export const factorSetupUsed = () => invalid("This setup was used already: start the enrolment again", "setupToken");

/** A security key or passkey (by its credential id) that the account has enrolled already. */
export const credentialEnrolledAlready = () => conflict("This security key or passkey is enrolled already", "response");

/** A login that may only enrol a second factor (the organization requires one) reached another route. */
export const enrolmentRequired = () => forbidden("Your organization requires a second factor: enrol one, then sign in again");

// ---- Account recovery -----------------------------------------------------------------------

/** Trustees named twice. */
export const trusteeNamedTwice = () => invalid("A trustee is named twice", "shares");

/** k or n outside their bounds. */
export const badRecoveryThreshold = (minK: number, maxN: number) =>
  invalid(`A recovery has 2 to ${maxN} trustees, and needs from ${minK} (your organization's least) to all of them`, "threshold");

/** A trustee who is not in the user's organization (or was removed, or is the user). */
export const trusteeOutsideOrg = (userId: string) => invalid(`Trustee ${userId} is not another member of your organization`, "shares");

/** A trustee who is not an owner or admin. */
export const trusteeNotEligible = (userId: string) => invalid(`Trustee ${userId} is not an owner or admin of your organization`, "shares");

/** The enrolment's signature does not verify under the account's signing key. */
export const enrolmentNotSigned = () => invalid("The enrolment is not signed by this account's key", "signature");

/** A versioned enrolment that does not come after the one it replaces. */
export const enrolmentNotNewer = (previous: number) =>
  conflict(`This enrolment's version must come after the current enrolment's (${previous}): read it again and enrol again`, "version");

/** A versioned enrolment whose version fields are incomplete, or name other keys or another KDF statement than the account's current ones. */
export const enrolmentStateWrong = (field: "version" | "keys" | "kdfVersion") =>
  invalid("The enrolment does not name this account's current keys and KDF statement (or names only part of its version)", field);

/** The account has no recovery enrolment. */
export const noRecoveryEnrolment = () => notFound("Recovery enrolment");

/** A request that is not pending (completed, cancelled, expired, or its enrolment replaced). */
export const recoveryNotPending = () => conflict("This recovery request is no longer pending");

/** An approval by someone who holds no share of the request's enrolment. */
export const notATrustee = () => forbidden("You are not a trustee of this recovery");

/** An approval whose signature does not verify under the trustee's key. */
export const approvalNotSigned = () => invalid("The approval is not signed by your key", "signature");

/** A request's secret that is not its own. */
export const recoveryTokenWrong = () => notFound("Recovery request");

/** A request's secret used past its own budget of polls and sign-ins (recovery-requests.ts, RECOVERY_POLLS_PER_HOUR). */
export const recoveryPollsTooMany = (retryAfterSec: number) =>
  rateLimited("Too many polls of this recovery request; try again later", retryAfterSec);

/** Completion with fewer approvals than the enrolment needs. */
export const tooFewApprovals = (have: number, need: number) => conflict(`This recovery has ${have} of the ${need} approvals it needs`);

/** Only the account's own sessions cancel its requests. */
export const recoveryRequestNotFound = () => notFound("Recovery request");

// ---- What the store reads under its locks ---------------------------------------------------

/** A registration with an email a user already has. */
export const emailTaken = () => conflict("A user with this email already exists", "email");

/** A registration with a signing key (so a user id) a user already has. */
export const signingKeyTaken = () => conflict("A user with this signing key already exists", "signingPublicKey");

/** An upgrade that gives a statement other than the one the account already holds. */
export const statementAlreadySet = (field: "keyStatement" | "kdfStatement") =>
  conflict("This account's statement is already set: a changed one needs a key change", field);

/** A trustee approving a recovery request a second time. */
export const approvedAlready = () => conflict("You approved this recovery already");

// ---- Remembered devices ---------------------------------------------------------------------

/** A remembered device to forget that is not one of the caller's. */
export const rememberedDeviceNotFound = () => notFound("Remembered device");

// ---- Passkeys that sign in (passkey-logins.ts) ---------------------------------------------

/** A passkey's name out of bounds. */
export const badPasskeyName = () => invalid("name must be 1 to 64 printable characters", "name");

/** The organization forbids signing in with a passkey. */
export const passkeysForbidden = () => forbidden("Your organization does not allow signing in with a passkey");

/** The organization requires a passkey, and the account has one: the password alone signs it in no more. */
export const passkeyRequired = () =>
  forbidden("Your organization requires you to sign in with your passkey; lost it? Recover your account through your trustees");

/** The registration's setup or the credential's answer did not check out. */
export const passkeyNotConfirmed = (field: "setupToken" | "response") =>
  invalid(
    field === "setupToken"
      ? "This registration was not started by this account, or expired: start it again"
      : "The passkey's answer does not verify (challenge, origin, relying party, user verification): try again",
    field,
  );

/** One credential registered twice. */
export const passkeyEnrolledAlready = () => conflict("This passkey signs in to your account already", "response");

/** An account at its cap of sign-in passkeys. */
export const tooManyPasskeys = (max: number) => conflict(`An account keeps at most ${max} sign-in passkeys`);

/** A passkey sign-in that does not check out: unknown passkey, wrong signature, no user verification, a counter gone back. */
export const passkeySignInFailed = () => unauthorized("This passkey does not sign in here");

/** A passkey's unlock named twice in a re-wrap. */
export const passkeyUnlockNamedTwice = () => invalid("Each passkey is named once", "passkeys");

/** A password change or key rotation that does not re-wrap exactly the passkeys that unlock the account. */
export const passkeysChanged = (missing: number, extra: number) =>
  conflict(
    `The request must re-wrap the unlock of exactly your passkeys that keep one (${missing} missing, ${extra} not yours or keeping none): read them again`,
    "passkeys",
  );

/** The caller has no such sign-in passkey. */
export const passkeyNotFound = () => notFound("Passkey");
