/**
 * Named refusals: each constructor is the one place a refusal's code, message and field are
 * written, and each is thrown by one rule (a `decide*` in lib/domain/). Grep a name to find its
 * rule and the rule's test; the error body keeps the contract's shape (`{ error: { code,
 * message, field? } }`).
 */
import { AppError, conflict, forbidden, invalid, notFound, notRedeemable, unauthorized } from "../errors";
import type { VaultRole } from "./types";

// ---- Items (lib/domain/items/decisions.ts) ----------------------------------------------------------------

/** The vault does not exist, or the caller is not its member (the contract does not tell them apart). */
export const vaultNotFound = () => notFound("Vault");
/** The item is not in the vault. */
export const itemNotFound = () => notFound("Item");
/** A create names an itemId the vault already holds. */
export const itemIdTaken = () => conflict("An item with this itemId already exists", "itemId");
/** A create names an itemId that is in the vault's trash (restore or purge it first). */
export const itemIdInTrash = () => conflict("An item with this itemId is in the vault's trash: restore or purge it", "itemId");
/** An import with no items. */
export const importEmpty = () => invalid("An import holds at least one item", "items");
/** An import of more items than one request may add. */
export const importTooLarge = (max: number) => invalid(`An import adds at most ${max} items: send the rest in another`, "items");
/** An import names an itemId twice. */
export const importIdTwice = (itemId: string) => invalid(`item ${itemId} appears twice`, "items");
/** An import names an itemId the vault holds (in its items or its trash). */
export const importIdTaken = (itemId: string) =>
  conflict(`An item with itemId ${itemId} already exists in the vault or its trash`, "items");
/** A restore or purge names an item that is not in the vault's trash. */
export const notInTrash = () => notFound("Trashed item");
/** An update states a revision other than the stored one: it was made on an older read. */
export const staleRevision = (stored: number, stated: number) => conflict(`The item's revision is ${stored}, not ${stated}`, "revision");
/** The item changed between the read under the lock and the conditional write (the store's own race). */
export const itemChangedMeanwhile = () => conflict("The item changed meanwhile", "revision");

// ---- Registration and invites (lib/domain/accounts/registration.ts, lib/domain/orgs/invites.ts) ---------------

/** The server takes no registrations (REGISTRATION_MODE=disabled). */
export const registrationDisabled = () => forbidden("Registration is disabled on this server");
/** REGISTRATION_MODE=invite, the server has users, and the request carries no invite. */
export const inviteRequired = () => forbidden("Registration needs an invite");
/** An invite token that is no invite's. */
export const inviteTokenNotFound = () => notFound("Invite token");
/** The invite is used, revoked or expired. */
export const inviteNotRedeemable = () => notRedeemable();
/** The invite is for another address than the one registering. */
export const notTheInvitedEmail = () => invalid("The email is not the invited one", "email");
/** An invite's `expiresIn` that is not a duration from 1s to 30d. */
export const badInviteLifetime = () => invalid("expiresIn must be like 24h or 72h, from 1s to 30d", "expiresIn");

// ---- Rate limits (lib/domain/accounts/address-limits.ts) -------------------------------------------------

/** Past a per-address limit: `429` with its message and the seconds until the window ends. */
export const rateLimited = (message: string, retryAfterSec: number) => new AppError("RATE_LIMITED", message, { retryAfterSec });

// ---- Vault roles and membership (lib/domain/vaults/roles.ts, vault-decisions.ts, org-roles.ts) ---

/** The role table does not let a vault role take an action (`mayDo`, protocol/vault-roles.ts). */
export const roleMayNot = (role: VaultRole, action: string) =>
  forbidden(`A vault ${role} may not ${action.replace(/[A-Z]/g, (c) => " " + c.toLowerCase())}`);
/** Who may remove whom (`mayRemoveMember`). */
export const mayNotRemove = (actorRole: VaultRole, targetRole: VaultRole) =>
  forbidden(`A vault ${actorRole} may not remove a vault ${targetRole}`);
/** A change that would leave a vault without an owner. */
export const lastOwner = (removing: boolean) =>
  invalid(removing ? "The last owner of a vault cannot be removed" : "The last owner of a vault cannot be demoted");
/** A personal vault has one member, its owner. */
export const personalNotShareable = () => invalid("A personal vault cannot be shared");
/** The owner of a personal vault cannot be given another role. */
export const personalOwnerStays = () => invalid("The owner of a personal vault stays its owner", "role");
/** Owners are made by a role change, never when added. */
export const addedAsOwner = () => invalid("A new member's role is admin or member", "role");
/** The recipient is not a user of the vault's organization. */
export const recipientNotFound = () => notFound("Recipient");
/** The recipient already holds the vault. */
export const alreadyMember = () => conflict("The recipient is already a member of this vault", "recipientUserId");
/** The user the change names is not a member of the vault. */
export const memberNotFound = () => notFound("Member");
/** Only an organization's owners and admins manage it (its invites, its audit log). */
export const notOrgManager = (what: string) => forbidden(`Only the organization's owners and admins ${what}`);

// ---- The signed roster (lib/domain/vaults/decisions.ts) ------------------------------------------

/** A change with a link on a vault that has no signed roster yet. */
export const rosterNotAdopted = (field: string) =>
  invalid(
    "This vault has no signed roster: an owner adopts one with a rekey that carries an adopt link (POST /vaults/:vaultId/rekey)",
    field,
  );
/** A change without its link on a vault that has a signed roster. */
export const rosterLinkMissing = (field: string) => invalid("This vault has a signed roster: the change needs its next link", field);
/** A signed vault's id is derived from its creator and first wrap. */
export const vaultIdNotDerived = () =>
  invalid("Roster link: vaultId must be derived from its creator and wrap (vaultIdFor, protocol/ids.ts)", "rosterLink.vaultId");

/** A write without its next item link on a vault that keeps an item log. */
export const itemLinkMissing = (field: string) => invalid("This vault keeps a signed item log: the write must carry its next link", field);
/** An item link on a vault without a signed roster (which keeps no item log). */
export const itemLogWithoutRoster = (field: string) => invalid("A vault without a signed roster keeps no item log", field);

// ---- The rekey (lib/domain/vaults/rekey.ts) -----------------------------------------------------------

/** The rekey names an entry twice. */
export const twiceInSet = (what: string, id: string, field: string) => invalid(`${what} ${id} appears twice`, field);
/** The rekey names an entry the vault does not hold. */
export const notInVault = (what: string, id: string, field: string) => invalid(`${what} ${id} is not in the vault`, field);
/** The rekey re-encrypts a revision of a trashed item it leaves out of `trash` (and so drops). */
export const revisionOfDroppedItem = (key: string) =>
  invalid(`revision ${key} belongs to a trashed item this rekey leaves out of trash, which drops it with its history`, "history");
/** The rekey leaves entries of the vault out. */
export const missingFromSet = (what: string, missing: number, field: string) =>
  invalid(`${missing} ${what}(s) of the vault missing`, field);
/** An item re-encrypted from an older revision than the stored one. */
export const itemChangedSinceRead = (itemId: string, stored: number, stated: number) =>
  conflict(`Item ${itemId} changed since it was read (revision ${stored}, not ${stated})`, "revision");
/** A key version other than the vault's. */
export const keyVersionMismatch = (current: number, stated: number) =>
  conflict(`The vault's key version is ${current}, not ${stated}`, "keyVersion");

// ---- Names and sizes (lib/domain/names.ts, items.ts) -------------------------------------------

/** A name that breaks the one rule for names (protocol/names.ts). */
export const badName = (field: string, problem: string) => invalid(`${field} ${problem}`, field);
/** An item's ciphertext past its size. */
export const itemTooLarge = (field: "encryptedData" | "encryptedName", limit: string) => invalid(`${field} is larger than ${limit}`, field);

// ---- A vault's limits (lib/domain/vaults/limits.ts) ----------------------------------------------

/** A write that adds items to a vault at VAULT_MAX_ITEMS (its trash counts). */
export const vaultItemsFull = (items: number, maxItems: number) =>
  new AppError(
    "PAYLOAD_TOO_LARGE",
    `The vault holds ${items} items, its trash included; its limit (VAULT_MAX_ITEMS ${maxItems}) allows no more`,
  );
/** A write that would take a vault's ciphertext past VAULT_MAX_BYTES. */
export const vaultBytesFull = (bytes: number, maxBytes: number) =>
  new AppError(
    "PAYLOAD_TOO_LARGE",
    `The vault holds ${bytes} bytes of ciphertext; this write would take it past its limit of ${maxBytes} (VAULT_MAX_BYTES), ` +
      "so that it can always be rekeyed. Delete items and purge them from the trash (deleted items count until then), or move some to another vault",
  );
/** A rekey whose new ciphertexts grow the vault past VAULT_MAX_BYTES. */
export const rekeyPastVaultLimit = (newBytes: number, maxBytes: number) =>
  new AppError(
    "PAYLOAD_TOO_LARGE",
    `The rekeyed items hold ${newBytes} bytes of ciphertext, past the vault's limit of ${maxBytes} (VAULT_MAX_BYTES) and more than it holds now`,
  );

// ---- Keys, statements and formats (lib/domain/accounts/keys.ts, statements.ts, email.ts, item-pages.ts, audit.ts) ----

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
/** A wrapped vault key of another length than its vault type and holder's key give. */
export const badWrapLength = (expected: number, vaultType: string) =>
  invalid(`encryptedVaultKey must be exactly ${expected} bytes for this ${vaultType} vault and holder`, "encryptedVaultKey");
/** A wrap not signed by its sender. */
export const badWrapSignature = () =>
  invalid("wrapSignature does not verify over encryptedVaultKey with the sender's signing key", "wrapSignature");
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
/** An address the one email rule (protocol/email.ts) refuses, in its words. */
export const badEmail = (why: string, field: string) => invalid(why, field);
/** An `after` that is not a cursor this server gave. */
export const badCursor = () => invalid("after is not a cursor this server gave (pass the `next` of the page before)", "after");
/** A delta read asked with pages (lib/domain/items/changes.ts). */
export const deltaWithPage = () => invalid("since reads the changes in one answer: it cannot be combined with limit or after", "since");
/** A link naming an audit head this organization's log does not have (`AuditClaim`). */
export const unknownAuditHead = (field: string) =>
  invalid("The link names an audit head this organization's audit log does not have", `${field}.auditHead`);

// ---- Who sees what (lib/domain/orgs/access.ts), and sessions ----------------------------------------

/** Another organization than the caller's. */
export const notOrgMember = () => forbidden("Not a member of this organization");
/** A user of another organization, or none: they do not exist for the caller. */
export const userNotFound = () => notFound("User");
/** An invite of another organization, or none. */
export const inviteNotFound = () => notFound("Invite");
/** Only the inviter signs their invite. */
export const notTheInviter = () => forbidden("Only the inviter signs an invite");
/** The organization the request names is gone. */
export const orgNotFound = () => notFound("Organization");
/** The access token's user no longer exists. */
export const tokenUserGone = () => unauthorized("The token's user no longer exists");
/** A login with the wrong email or password (the one answer for both). */
export const wrongEmailOrPassword = () => unauthorized("Wrong email or password");
/** A refresh token that is no login's, expired, or reused (which revokes the login). */
export const badRefreshToken = (reused: boolean) =>
  unauthorized(reused ? "Refresh token reused; the login was revoked" : "Invalid or expired refresh token");
/** A refresh token whose user is gone. */
export const refreshUserGone = () => unauthorized("Invalid refresh token");
/** Another registration is redeeming this invite right now. */
export const inviteBeingRedeemed = () => notRedeemable("The invite is being redeemed");
/** An argon2id KDF without one of its parameters. */
export const kdfParameterMissing = (field: "memoryKiB" | "parallelism") => invalid(`argon2id needs ${field}`, field);
/** A checkpoint request without its link. */
export const checkpointWithoutLink = () => invalid("A checkpoint is an itemLink", "itemLink");
/** A statements upgrade that gives neither statement. */
export const noStatementGiven = () => invalid("Give keyStatement, kdfStatement or both", "keyStatement");
/** A redeem token of the wrong shape (counted against the address before it is checked). */
export const badRedeemToken = (min: number, max: number) => invalid(`token must be a string of ${min} to ${max} characters`, "token");

// ---- Readiness (lib/domain/readiness.ts) --------------------------------------------------------

/** A health check while some routed action has no node to serve it yet (a split deployment starting). */
export const notEveryServiceReachable = () => new AppError("UNAVAILABLE", "Not every service is reachable yet");

// ---- Sessions (lib/domain/accounts/sessions.ts) ----------------------------------------------------------

/** A device name that is empty, too long, or holds characters that do not print. */
export const badDeviceName = () =>
  invalid("deviceName must be 1 to 64 printable characters (no control or direction-override characters)", "deviceName");
/** An access token from before sessions: its holder refreshes it (the refresh token's session is recorded then). */
export const tokenWithoutSession = () => unauthorized("This access token names no session: refresh it");
/** The access token's session was ended (logout, a revocation, a password change) or expired. */
export const sessionEnded = () => unauthorized("This session has ended");
/** A login whose password was compared just before a password change swapped it: it starts no session. */
export const passwordChangedMeanwhile = () => unauthorized("The master password changed meanwhile; log in again");
/** A session to end that is not one of the caller's live sessions. */
export const sessionNotFound = () => notFound("Session");

// ---- Master password change (lib/domain/accounts/password-change.ts) ------------------------------------

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

// ---- Key rotation (lib/domain/accounts/key-rotation.ts) ---------------------------------------------------

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

// ---- People leave (lib/domain/orgs/membership.ts) ------------------------------------------------

/** The organization's last owner cannot leave it or be removed. */
export const lastOrgOwner = () => invalid("The organization's last owner cannot leave it: make someone else an owner first");
/** The person is the last owner of shared vaults others are in: an owner is named there first. */
export const lastOwnerOfVaults = (vaultIds: readonly string[]) =>
  invalid(
    `The last owner of ${vaultIds.length} shared vault(s) others are in cannot leave: make another owner there first (${vaultIds.join(", ")})`,
    "vaults",
  );
/** A person taken out of their organization signs in no more. */
export const removedFromOrg = () => forbidden("This account was removed from its organization");

// ---- Second factors (lib/domain/accounts/second-factors.ts) ----------------------------------------------

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
/** A login that may only enrol a second factor (the organization requires one) reached another route. */
export const enrolmentRequired = () => forbidden("Your organization requires a second factor: enrol one, then sign in again");

// ---- Organization policies (lib/domain/orgs/policies.ts) -----------------------------------------

/** Only an organization's owners set its policies. */
export const policiesOwnersOnly = () => forbidden("Only the organization's owners set its policies");
/** A policy value outside its bounds. */
export const badPolicy = (field: string) => invalid(`${field} is outside its bounds`, field.split(".").pop());
/** A new master password whose KDF costs less than the organization requires. */
export const kdfBelowPolicy = (m: { argon2idMemoryKiB: number; argon2idIterations: number; pbkdf2Iterations: number }) =>
  invalid(
    `Your organization requires a KDF of at least argon2id ${m.argon2idMemoryKiB} KiB x ${m.argon2idIterations}, or pbkdf2-sha256 x ${m.pbkdf2Iterations}`,
    "kdf",
  );
/** An invite asked to last longer than the organization allows. */
export const inviteOutlivesPolicy = (max: string) => invalid(`Your organization's invites last at most ${max}`, "expiresIn");

// ---- Account recovery (lib/domain/accounts/recovery.ts) ------------------------------------------

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
/** Completion with fewer approvals than the enrolment needs. */
export const tooFewApprovals = (have: number, need: number) => conflict(`This recovery has ${have} of the ${need} approvals it needs`);
/** Only the account's own sessions cancel its requests. */
export const recoveryRequestNotFound = () => notFound("Recovery request");

// ---- What the store reads under its locks (lib/domain/store-checks.ts) --------------------------

/** A registration with an email a user already has. */
export const emailTaken = () => conflict("A user with this email already exists", "email");
/** A registration with a signing key (so a user id) a user already has. */
export const signingKeyTaken = () => conflict("A user with this signing key already exists", "signingPublicKey");
/** An upgrade that gives a statement other than the one the account already holds. */
export const statementAlreadySet = (field: "keyStatement" | "kdfStatement") =>
  conflict("This account's statement is already set: a changed one needs a key change", field);
/** A statement for an invite that holds another one. */
export const inviteHasStatement = () => conflict("The invite already has a statement", "signature");
/** A statement for an invite that is no longer pending (used or revoked meanwhile). */
export const inviteNotPendingForStatement = () => notRedeemable("Only a pending invite takes a statement");
/** A trustee approving a recovery request a second time. */
export const approvedAlready = () => conflict("You approved this recovery already");
/** A write that lost a unique-key race to another (the store's own race). */
export const alreadyExists = () => conflict("Already exists");
/** A transaction that lost its race on a vault more often than it retries (the store's own race). */
export const lostRace = () => conflict("The vault changed meanwhile; try again");
/** A change too large for the database to hold in one transaction. */
export const tooLargeForOneTransaction = () => new AppError("PAYLOAD_TOO_LARGE", "The change is too large for one database transaction");
