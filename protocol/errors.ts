/**
 * What the protocol core refuses. `SecurityError` is a client refusing something the server handed it
 * (a wrap whose signature fails, a changed key, a tampered item); `UnlockError` a password that does
 * not open a key bundle.
 */

export type SecurityProblem =
  /** An Ed25519 signature over a wrap or over a public key does not verify. */
  | "BAD_SIGNATURE"
  /** A user's key bundle differs from the one pinned on first use. */
  | "KEY_CHANGED"
  /** A user's key log that does not verify on its own: an entry out of place, or a step not signed by the key before it and its own. */
  | "KEY_LOG_BROKEN"
  /** A user's key log shorter than the one this device followed, or keys older than the ones it followed to. */
  | "KEY_LOG_ROLLBACK"
  /** A user's key log with another entry at a version this device followed: a forked key history. */
  | "KEY_LOG_FORK"
  /** A ciphertext does not open under its key and its vault and item ids. */
  | "TAMPERED"
  /** A kept revision or a trashed item other than the one the signed item log names for it (another revision's ciphertext, labelled as this one). */
  | "HISTORY_MISMATCH"
  /** A recovery trustee whose keys this device knows only from the server (not compared out of band, nor vouched by an invite). */
  | "TRUSTEE_UNVERIFIED"
  /** A recovery enrolment or task that is not what its user signed, or does not name this trustee with their own keys. */
  | "RECOVERY_TAMPERED"
  /**
   * A recovery enrolment older than one this device has seen for the account (a lower version, or
   * an unversioned one after a versioned one, or another enrolment at a seen version), or made
   * under account keys or a KDF statement the account has since replaced: the user enrolled again,
   * changed the password or rotated keys since, so its trustees must not release their shares.
   */
  | "RECOVERY_SUPERSEDED"
  /** A recovery request that names this user as no trustee. */
  | "RECOVERY_UNKNOWN"
  /** The code the user read out is not the one the request's one-time key gives. */
  | "RECOVERY_CODE_MISMATCH"
  /** Fewer than k approvals are in. */
  | "RECOVERY_NOT_APPROVED"
  /** The approvals do not rebuild the secret that opens the recovery copy. */
  | "RECOVERY_FAILED"
  /** The keys a recovery opened are not the ones the trustee's read-back code vouches for. */
  | "RECOVERY_UNCONFIRMED"
  /** A trashed item deleted before the signed history this device checked: restored only when the person confirms it. */
  | "TRASH_UNVERIFIED"
  /** A kept revision written before the signed history this device checked: made current again only when the person confirms it. */
  | "REVISION_UNVERIFIED"
  /** The server's answer contradicts what the client knows (e.g. its own keys). */
  | "INCONSISTENT"
  /** A vault's signed roster breaks its rules: a link out of place, by someone without the right, or not whole. */
  | "ROSTER_BROKEN"
  /** A vault's roster is older than one this client already saw, or differs from it at a seen link. */
  | "ROSTER_ROLLBACK"
  /** The server's member list is not the member set the vault's verified roster gives. */
  | "MEMBER_LIST_MISMATCH"
  /** A wrap, the vault's key version, or its type (which says how its key is wrapped), is not the one the vault's verified roster vouches for. */
  | "WRAP_MISMATCH"
  /** KDF parameters below the client's floor (kdf.ts): nothing is derived from the password with them. */
  | "KDF_TOO_WEAK"
  /** KDF parameters outside the caps, or of an unknown form. */
  | "KDF_UNSUPPORTED"
  /** KDF parameters or salt other than the ones this device remembers for the account, without the account's signature for them. */
  | "KDF_CHANGED"
  /** A user id, email and key that do not belong together: against the pin, the user's signed key statement, or another pinned user. */
  | "IDENTITY_MISMATCH"
  /** An invite that is not what its inviter signed, or not from the inviter the link names. */
  | "INVITE_MISMATCH"
  /** An invited user's keys that the binding secret of the invite link does not vouch for. */
  | "INVITE_BINDING_MISMATCH"
  /** A vault name other than the one its verified roster vouches for. */
  | "NAME_MISMATCH"
  /** A vault without a signed roster: an owner adopts it before anyone writes to it or shares it. */
  | "UNSIGNED_VAULT"
  /** The verified roster says a removed member still holds the key: rekey before writing or sharing. */
  | "REKEY_REQUIRED"
  /** The server answered another item (or vault) than the one asked for. */
  | "ITEM_MISMATCH"
  /** A vault's signed item log breaks its rules: a link out of place, unsigned, by a non-member, or not following from the items before it. */
  | "ITEM_LOG_BROKEN"
  /** A vault's item log is shorter than one this client already saw, or differs from it at a seen link (a fork), or is gone. */
  | "ITEM_LOG_ROLLBACK"
  /** The server leaves out an item the signed item log holds. */
  | "ITEM_DROPPED"
  /** The server lists an item the signed item log deleted (or never created). */
  | "ITEM_RESURRECTED"
  /** The server shows an item at another revision than the signed item log's (an older version as the current one). */
  | "ITEM_STALE"
  /** The server's ciphertext of an item is not the one the signed item log names for its revision. */
  | "ITEM_HASH_MISMATCH"
  /** The item list does not add up to the digest of the log's last checkpoint and the links after it. */
  | "ITEM_SET_MISMATCH"
  /** An audit record missing, twice, out of order, or not hashing to what it carries (checked by this client, not the server). */
  | "AUDIT_BROKEN"
  /** The audit log is shorter than one this client already saw, or differs from it at a seen record. */
  | "AUDIT_ROLLBACK"
  /** A link another member signed names the audit head they verified, and the record this client verified at that seq differs: two audit histories. */
  | "AUDIT_FORK"
  /** An audit checkpoint not signed by the pinned audit key, or naming a head the records do not have. */
  | "AUDIT_CHECKPOINT_INVALID"
  /** The server's audit key is not the one this client pinned. */
  | "AUDIT_KEY_CHANGED"
  /** The organization's signed log breaks its rules: a link out of place, by someone without the right, or a join without its inviter's invite. */
  | "ORG_LOG_BROKEN"
  /** The organization's log is shorter than one this device already saw, or differs from it at a seen link (a fork), or is gone. */
  | "ORG_LOG_ROLLBACK"
  /** A vault this device knew is missing from the server's listing (hidden, or gone without this device seeing it go). */
  | "KNOWN_VAULT_MISSING"
  /** A vault name this device knows for one vault now names another one: not taken until the person confirms it. */
  | "NAME_MOVED"
  /**
   * This session holds an older account state than one the account has signed: its password was
   * changed or its keys rotated on another device (a wrap the account signed says so, or this
   * device saw it). Nothing is wrapped under the old password; log in again.
   */
  | "SESSION_STALE"
  /**
   * One's own personal wrap was made under an older KDF statement or key log than this device has
   * verified: whoever knows the old password (with an old copy of the server's data) may open it.
   */
  | "STALE_WRAP"
  /** A passkey's unlock wraps do not open with its PRF answer, or not for this account and account version: made by someone else, or for another passkey. */
  | "PASSKEY_UNLOCK_MISMATCH"
  /** The authenticator answered the PRF for a passkey the server says keeps no unlock: nothing is asked of the master password in its place. */
  | "PASSKEY_UNLOCK_WITHHELD"
  /** The server answers a passkey sign-in for another passkey, or another account, than the authenticator signed for. */
  | "PASSKEY_MISMATCH"
  /** A file its item names (in a revision the signed item log vouches for) that the server does not answer, or answers cut short. */
  | "ATTACHMENT_WITHHELD"
  /** A file's chunk that does not open with the key its item holds, as that file's chunk at that place: another file's, moved, changed, or not the last where it claims to be. */
  | "ATTACHMENT_TAMPERED"
  /** A send's part that does not open with the key its link (and password) gives, as that send's part at that place, or parts that do not add up to what its header says: another send's, moved, changed, cut short or run on. */
  | "SEND_TAMPERED"
  /** A grantee whose keys this device knows only from the server (not compared out of band, nor vouched by an invite): no grant is wrapped to them. */
  | "EMERGENCY_GRANTEE_UNVERIFIED"
  /** A grantor whose keys this device knows only from the server: their account is not opened (it could be one the server made up). */
  | "EMERGENCY_GRANTOR_UNVERIFIED"
  /**
   * An emergency access grant that is not what its grantor signed, names someone else on this
   * side, is wrapped to other keys than this account's, or releases a key that does not open the
   * grantor's keys as this device knows them.
   */
  | "EMERGENCY_TAMPERED";

export class SecurityError extends Error {
  override readonly name = "SecurityError";
  constructor(
    readonly code: SecurityProblem,
    message: string,
    /** The user whose key or signature is at fault, where there is one. */
    readonly userId?: string,
  ) {
    super(message);
  }
}

/** Wrong password, or a key bundle the password does not open. */
export class UnlockError extends Error {
  override readonly name = "UnlockError";
  readonly code = "WRONG_PASSWORD";
}
