/** Every error the service or the SDK can give, as a sentence a person understands: what the web vault and the browser extension show. */
import { ApiError, SecurityError, UnlockError, WeakPasswordError, type SecurityProblem } from "./errors";

/** One sentence per problem the SDK names: a new one without a sentence here does not compile. */
const SECURITY: Record<SecurityProblem, string> = {
  KEY_CHANGED:
    "Someone's keys are not the ones you saw before. Do not share with them until you have compared fingerprints with them in person or by phone.",
  KEY_LOG_BROKEN:
    "Someone's key history does not check out: a key step in it is not signed by the key before it. Their new keys were not trusted; compare fingerprints with them in person or by phone.",
  KEY_LOG_ROLLBACK:
    "The server is showing keys for someone that their own signed key history already replaced, or a shorter history than this browser has seen: their old keys were not used.",
  KEY_LOG_FORK:
    "The server is showing another key history for someone than the one this browser followed: someone may hold one of their old keys. Nothing was trusted; compare fingerprints with them in person or by phone.",
  BAD_SIGNATURE: "A signature did not check out, so this was refused: the server may have been tampered with.",
  TAMPERED: "Some stored data does not decrypt as it should: it may have been altered on the server.",
  HISTORY_MISMATCH:
    "The server offered an earlier version of an item (or a deleted one) that is not the one the vault's signed history wrote: it was refused, and nothing was restored.",
  TRASH_UNVERIFIED:
    "This item was deleted before the signed history this browser checked, so which version the server is giving back cannot be checked.",
  REVISION_UNVERIFIED:
    "This version was written before the signed history this browser checked, so which version the server is giving back cannot be checked.",
  TRUSTEE_UNVERIFIED:
    "This trustee's keys are known here only as the server showed them. Compare fingerprints with them in person or by phone (and trust them) before making them a recovery trustee.",
  RECOVERY_TAMPERED: "This account recovery is not what its user signed, or does not name you with your own keys, so it was refused.",
  RECOVERY_SUPERSEDED:
    "This account recovery is for an enrolment your colleague has since replaced (or made before they changed their password or keys), so your share was not released. Ask them to check their recovery settings.",
  RECOVERY_UNKNOWN: "No pending account recovery names you as a trustee under that request.",
  RECOVERY_CODE_MISMATCH:
    "The code is not the one this request's device shows. Do not approve: the request did not come from the device your colleague holds, or the server swapped it.",
  RECOVERY_NOT_APPROVED: "Not enough trustees have approved this recovery yet.",
  RECOVERY_FAILED: "The approvals do not open this account's recovery copy: fewer than the needed number of them are the trustees' own.",
  RECOVERY_UNCONFIRMED:
    "The code your trustee read back does not match the keys this browser recovered: they are not the keys your colleagues know for you. Nothing was used; ask them to read it again.",
  INCONSISTENT: "The server's answer contradicts what this browser knows, so it was refused.",
  ROSTER_BROKEN: "This vault's signed member history does not check out: the server may be misreporting who is in it.",
  ROSTER_ROLLBACK: "The server is showing an older version of this vault's member history than this browser has already seen.",
  MEMBER_LIST_MISMATCH: "The server's member list does not match the vault's signed member history, so nothing was sent.",
  WRAP_MISMATCH: "The key the server handed over is not the one the vault's signed history vouches for.",
  KDF_TOO_WEAK:
    "This account's password protection is weaker than this app accepts, so your password was not used: anyone holding what would be sent could guess it quickly.",
  KDF_UNSUPPORTED: "The server asked this browser to protect your password in a way it does not support, so your password was not used.",
  KDF_CHANGED:
    "The server asked this browser to protect your password differently from before, and your account never signed that change. Your password was not used: the server may be trying to learn it.",
  IDENTITY_MISMATCH:
    "The server pairs a person's name, account and keys otherwise than they signed or than this browser remembers, so it was refused.",
  INVITE_MISMATCH: "This invite is not the one your inviter made. Nothing was sent; ask them for a new link.",
  INVITE_BINDING_MISMATCH:
    "The keys this person registered are not the ones your invite link vouches for: whoever registered them did not have the link you sent. Compare fingerprints with them before sharing.",
  NAME_MISMATCH: "The server shows this vault under another name than its signed history gives it, so nothing was written to it.",
  UNSIGNED_VAULT:
    "This vault has no signed member history, so its member list is only the server's word. An owner adopts it first (a new key for the members they confirm); then it can be written to and shared.",
  REKEY_REQUIRED:
    "A member was removed and still holds this vault's key. Rekey the vault first; nothing is added or shared under the old key.",
  ITEM_MISMATCH: "The server answered with another item than the one asked for, so it was refused.",
  ITEM_LOG_BROKEN: "This vault's signed item history does not check out: the server may be misreporting what the vault holds.",
  ITEM_LOG_ROLLBACK:
    "The server is showing an older or different version of this vault's item history than this browser has already seen: recent changes, such as a deletion or a new password, would be undone.",
  ITEM_DROPPED: "The server left out an item that this vault's signed history says it holds.",
  ITEM_RESURRECTED: "The server shows an item that this vault's signed history says was deleted.",
  ITEM_STALE: "The server shows an older version of an item than the one this vault's signed history vouches for.",
  ITEM_HASH_MISMATCH: "The server shows an item's content that is not the one this vault's signed history vouches for at its version.",
  ITEM_SET_MISMATCH:
    "The items the server lists do not add up to what this vault's signed history vouches for: one was left out, added back or changed.",
  AUDIT_BROKEN: "The audit log does not check out here: a record is missing, out of order or was changed on the server.",
  AUDIT_ROLLBACK: "The server is showing a shorter or different audit log than this browser, or another member, has already checked.",
  AUDIT_FORK:
    "Another member checked a different audit log than this browser did: the server is showing people two histories. Compare the audit fingerprint with them by phone.",
  AUDIT_CHECKPOINT_INVALID: "The audit log's signed checkpoint does not check out against the server's audit key this browser pinned.",
  ORG_LOG_BROKEN:
    "The organization's signed log does not check out: a change in it is out of place, or signed by someone without the right. Roles were not taken from it.",
  ORG_LOG_ROLLBACK:
    "The server is showing an older or different version of the organization's signed log than this browser has already seen: a removal or a role change would be undone.",
  KNOWN_VAULT_MISSING:
    "The server no longer lists a vault this browser knew. It may have been deleted, or you were removed from it, or the server hides it: confirm it is gone only if you know why.",
  NAME_MOVED:
    "The server gives the name of a vault this browser knew to another vault, and no longer lists the one you knew. Nothing was taken under that name: confirm the vault you knew is gone only if you know why.",
  SESSION_STALE:
    "Your master password was changed, or your keys rotated, on another device, and this session still holds the old ones. Nothing was sealed under the old password: sign out and sign in with the new one.",
  STALE_WRAP:
    "This personal vault's key is still sealed under a master password you have since changed, so whoever knows the old one could open it. It was not used: open it once on a device signed in with the old password and give it a fresh key (rekey).",
  AUDIT_KEY_CHANGED:
    "The server's audit key is not the one this browser pinned, so its audit checkpoints are not accepted. Ask your administrator whether the key was replaced.",
  PASSKEY_UNLOCK_MISMATCH:
    "What the server keeps to unlock your account with this passkey does not open with it: it was made for another passkey or account, or changed. Nothing was unlocked; sign in with your master password and register the passkey again.",
  PASSKEY_UNLOCK_WITHHELD:
    "Your passkey can unlock your account, but the server answered without what it unlocks with, as if to make you type your master password. Nothing was asked of it: try again, or tell your administrator.",
  PASSKEY_MISMATCH:
    "The server answered your sign-in for another passkey or another account than the one your passkey holds. You were not signed in.",
  ATTACHMENT_WITHHELD:
    "The server does not hand over a file this item holds, or hands over only part of it. Nothing was saved; try again, or tell your administrator.",
  ATTACHMENT_TAMPERED:
    "A part of this file does not open with the item's key: the server handed over another file, or a changed one. Nothing was saved; tell your administrator.",
  SEND_TAMPERED:
    "This send does not open with its link's key: the server handed over something else, or a changed or shortened copy. Nothing was shown; ask the sender for a new link.",
  EMERGENCY_GRANTEE_UNVERIFIED:
    "You have not checked this person's keys yet: compare fingerprints with them (and trust them) before you give them emergency access. Nothing was granted.",
  EMERGENCY_GRANTOR_UNVERIFIED:
    "You have not checked this person's keys yet: compare fingerprints with them (and trust them) before you open their account. Nothing was opened.",
  EMERGENCY_TAMPERED:
    "This emergency access is not what its grantor signed, or its key does not open their account as your device knows it. Nothing was opened; tell your administrator.",
};

const API: Record<string, string> = {
  UNAUTHORIZED: "Your email or password is not right, or your session has ended. Log in again.",
  NOT_FOUND: "That was not found: it may have been deleted, or you no longer have access to it.",
  CONFLICT: "Someone changed this at the same time. Reload and try again.",
  INVITE_NOT_REDEEMABLE: "This invite has expired, was already used, or was revoked. Ask the person who invited you for a new one.",
  PAYLOAD_TOO_LARGE: "That is too large to store.",
  UNAVAILABLE: "The service is busy or partly down. Wait a moment and try again.",
  INTERNAL: "Something went wrong on the server. Try again; if it keeps happening, tell your administrator.",
  UNREACHABLE: "The server cannot be reached. Check your connection and that the service is running, then try again.",
  LOCKED: "Your vault is locked. Unlock it with your master password.",
};

/** A mistake the page itself found (two passwords that differ): its message is already the sentence. */
export class InputError extends Error {}

export function sentence(err: unknown): string {
  if (err instanceof InputError) return err.message;
  if (err instanceof UnlockError) return "That master password is not right.";
  if (err instanceof WeakPasswordError) return ["That master password is too weak.", ...err.reasons, ...err.suggestions].join(" ");
  if (err instanceof SecurityError) return `${SECURITY[err.code] ?? "A security check failed."} (${err.message})`;
  if (err instanceof ApiError) {
    if (err.code === "RATE_LIMITED") return `Too many attempts. Try again in ${err.retryAfter ?? 60} seconds.`;
    if (err.code === "INVALID") return `That was not accepted: ${err.message.replace(/\.?$/, ".")}`;
    if (err.code === "CONFLICT" && err.field === "email") return "An account with this email already exists. Log in instead.";
    if (err.code === "CONFLICT" && err.field === "accountVersion")
      return "Your master password was changed on another device. Log in again with the new one.";
    if (err.code === "FORBIDDEN" && /needs an invite/i.test(err.message))
      return "This server only lets people register with an invite: ask an administrator for an invite link.";
    if (err.code === "FORBIDDEN") return `You are not allowed to do that (${err.message.replace(/\.$/, "")}).`;
    return API[err.code] ?? `The server said: ${err.message}`;
  }
  return `Something went wrong: ${(err as Error)?.message ?? String(err)}`;
}
