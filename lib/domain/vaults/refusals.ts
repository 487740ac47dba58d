/**
 * Named refusals of vaults: each constructor is the one place a refusal's code, message and field
 * are written, and each is thrown by one rule of this folder. Grep a name to find its rule and its
 * test; the error body keeps the contract's shape (`{ error: { code, message, field? } }`).
 */
import { AppError, conflict, forbidden, invalid, notFound } from "../../errors";
import type { VaultRole } from "../types";

// ---- Vault roles and membership -------------------------------------------------------------

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

// ---- The signed roster ----------------------------------------------------------------------

/** A change with a link on a vault that has no signed roster yet. */
export const rosterNotAdopted = (field: string) =>
  invalid(
    "This vault has no signed roster: an owner adopts one with a rekey that carries an adopt link (POST /vaults/:vaultId/rekey)",
    field,
  );

/** A change without its link on a vault that has a signed roster. */
export const rosterLinkMissing = (field: string) => invalid("This vault has a signed roster: the change needs its next link", field);

/**
 * A roster link that breaks the chain's form or rules (protocol/formats/roster.ts), or describes
 * another change than the request makes: `why` is the rule's own sentence, `field` the link's
 * field it names (`rosterLink.seq`).
 */
export const rosterLinkRefused = (field: string, why: string) => invalid(`Roster link: ${why}`, field);

/** A signed vault's id is derived from its creator and first wrap. */
export const vaultIdNotDerived = () =>
  invalid("Roster link: vaultId must be derived from its creator and wrap (vaultIdFor, protocol/ids.ts)", "rosterLink.vaultId");

// ---- The rekey ------------------------------------------------------------------------------

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

// ---- A vault's limits -----------------------------------------------------------------------

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

// ---- Keys, statements and formats -----------------------------------------------------------

/** A wrapped vault key of another length than its vault type and holder's key give. */
export const badWrapLength = (expected: number, vaultType: string) =>
  invalid(`encryptedVaultKey must be exactly ${expected} bytes for this ${vaultType} vault and holder`, "encryptedVaultKey");

/** A wrap not signed by its sender. */
export const badWrapSignature = () =>
  invalid("wrapSignature does not verify over encryptedVaultKey with the sender's signing key", "wrapSignature");
