/**
 * Other users' keys, and how far this device trusts them. Every bundle the server hands out (a
 * key lookup, the organization's member list) passes `checkBundle` before its keys or its email
 * are used or shown:
 * - the bundle is the user's asked for, and its Ed25519 key signed its RSA key;
 * - its key statement, when it has one, verifies: the user's own signature over their id, email
 *   and keys, so the server cannot show one user's genuine keys under another's id or email;
 * - it agrees with the pin: the same fingerprint (else `KEY_CHANGED`), the same email, a
 *   statement if one was seen before, and no other pinned user with this email
 *   (`IDENTITY_MISMATCH`);
 * - a user this device invited with a binding secret proves, with the MAC they registered with,
 *   that these are the keys of whoever opened the link (`INVITE_BINDING_MISMATCH`).
 * The first bundle seen for a user is pinned with its email; one vouched for by an invite is
 * pinned as such, without trust on first use.
 */
import { normalizeEmail } from "../email";
import { fromBase64, toBase64 } from "../encoding";
import { ApiError, SecurityError } from "../errors";
import { bundleSelfSignatureVerifies, groupedFingerprint, keyFingerprint, type PublicKeyBundle } from "../keys";
import { asPin, type Pin, type PinSource } from "../pins";
import { inviteBindingVerifies, keyStatementBytes, statementVerifies, type SignedStatement } from "../statements";
import type { ClientCore } from "./core";
import type { OrgRole } from "./types";

/** A user's public keys as the server hands them out, with what vouches for them. */
export interface ServedBundle extends PublicKeyBundle {
  email: string;
  keyStatement?: SignedStatement;
  inviteBinding?: { inviteId: string; mac: string };
}

export type OrgMember = ServedBundle & { role: OrgRole; createdAt: string };

/** How far this device trusts a user's keys, after `checkBundle`. */
export type TrustLevel = PinSource;

/** A member of the organization with their keys checked; `problem` when the server's pairing does not hold. */
export interface CheckedMember extends OrgMember {
  trust?: TrustLevel;
  problem?: SecurityError;
}

/** Pins by user id, and which user id each pinned email belongs to: read once per check of a list. */
interface PinIndex {
  byUser: Map<string, Pin>;
  userOfEmail: Map<string, string>;
}

export class Trust {
  constructor(private readonly core: ClientCore) {}

  /** A user's public keys, checked (`checkBundle`) and pinned. */
  async userKeys(userId: string): Promise<ServedBundle> {
    const bundle = await this.core.http.request<ServedBundle>("GET", `/users/${encodeURIComponent(userId)}/keys`);
    await this.checkBundle(bundle, userId);
    return bundle;
  }

  /**
   * One's own bundle comes from the unlocked keys (or, locked, the login's copy, checked against
   * its pin); anyone else's through the checked lookup.
   */
  async keysOf(userId: string): Promise<Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">> {
    const { core } = this;
    if (userId !== core.account.userId) return this.userKeys(userId);
    if (core.keys) return { publicKey: toBase64(core.keys.publicKeyDer), signingPublicKey: toBase64(core.keys.signingPublicKeyRaw) };
    const own = { publicKey: core.account.publicKey, signingPublicKey: core.account.signingPublicKey };
    await this.checkOwnPin(own);
    return own;
  }

  /** One's own keys against their pin (pinned at the first login on this device). */
  async checkOwnPin(own: Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">): Promise<void> {
    const { userId, email } = this.core.account;
    const fingerprint = groupedFingerprint(await keyFingerprint(own));
    const kept = await this.core.pins.get(userId);
    if (kept === undefined) return this.core.pins.set(userId, { fingerprint, email, via: "first-use" });
    const pin = asPin(kept);
    if (pin.fingerprint !== fingerprint) throw keyChanged(userId, email, pin.fingerprint, fingerprint);
    if (pin.email === undefined) await this.core.pins.set(userId, { ...pin, email });
  }

  /**
   * The checks every bundle passes before its keys are used or its email shown (see the file's
   * comment); pins it on first contact, and completes an older pin (email, statement seen).
   */
  async checkBundle(bundle: ServedBundle, expectedUserId?: string, index?: PinIndex): Promise<TrustLevel> {
    const { userId, email, keys, fingerprint } = await selfConsistent(bundle, expectedUserId);
    const statement = bundle.keyStatement;
    const pins = index ?? (await this.pinIndex());
    const pinned = pins.byUser.get(userId);
    if (pinned) {
      if (pinned.fingerprint !== fingerprint) throw keyChanged(userId, email, pinned.fingerprint, fingerprint);
      if (pinned.email !== undefined && pinned.email !== email)
        throw new SecurityError(
          "IDENTITY_MISMATCH",
          `the server shows ${email} for user ${userId}, whom this device pinned as ${pinned.email}`,
          userId,
        );
      if (pinned.stated && !statement)
        throw new SecurityError(
          "IDENTITY_MISMATCH",
          `the server withholds the signed key statement of ${email}, which this device saw before`,
          userId,
        );
    }
    const owner = pins.userOfEmail.get(email);
    if (owner !== undefined && owner !== userId)
      throw new SecurityError(
        "IDENTITY_MISMATCH",
        `the server shows ${email} for user ${userId}, but this device pinned ${email} as user ${owner}`,
        userId,
      );
    let via: PinSource = pinned?.via ?? "first-use";
    if (via === "first-use") {
      const invited = await this.core.inviteSecrets.get(email);
      if (invited) {
        const binding = bundle.inviteBinding;
        const vouched =
          statement !== undefined &&
          binding?.inviteId === invited.inviteId &&
          (await inviteBindingVerifies(fromBase64(invited.secret), { userId, email, keys, version: statement.version }, binding.mac));
        if (!vouched)
          throw new SecurityError(
            "INVITE_BINDING_MISMATCH",
            `the keys the server shows for ${email} (${fingerprint}) are not the ones your invite link vouches for: whoever registered them did not have the link you sent. Compare fingerprints with ${email} out of band before trusting them`,
            userId,
          );
        via = "invite";
      }
    }
    const next: Pin = { fingerprint, email, via, ...((statement || pinned?.stated) && { stated: true }) };
    if (!pinned || pinned.email !== next.email || pinned.via !== next.via || pinned.stated !== next.stated) {
      await this.core.pins.set(userId, next);
      pins.byUser.set(userId, next);
      pins.userOfEmail.set(email, userId);
    }
    return via;
  }

  private async pinIndex(): Promise<PinIndex> {
    const byUser = new Map<string, Pin>();
    const userOfEmail = new Map<string, string>();
    for (const [userId, kept] of await this.core.pins.entries()) {
      const pin = asPin(kept);
      byUser.set(userId, pin);
      if (pin.email !== undefined) userOfEmail.set(pin.email, userId);
    }
    return { byUser, userOfEmail };
  }

  /**
   * The fingerprint the server currently shows for a user (consistent in itself: self-signed, its
   * statement verifying, but not yet checked against the pins), and the pinned one with its source.
   */
  async fingerprint(userId: string): Promise<{ current: string; pinned?: string; email: string; trust?: TrustLevel }> {
    const bundle = await this.core.http.request<ServedBundle>("GET", `/users/${encodeURIComponent(userId)}/keys`);
    const { fingerprint } = await selfConsistent(bundle, userId);
    const kept = await this.core.pins.get(bundle.userId);
    const pin = kept === undefined ? undefined : asPin(kept);
    return { current: fingerprint, pinned: pin?.fingerprint, email: bundle.email, trust: pin?.via };
  }

  /** Accepts a user's keys as they are now: call only after comparing the fingerprint out of band. */
  async trustUser(userId: string, fingerprint: string): Promise<void> {
    const bundle = await this.core.http.request<ServedBundle>("GET", `/users/${encodeURIComponent(userId)}/keys`);
    const { fingerprint: current } = await selfConsistent(bundle, userId);
    if (current !== fingerprint)
      throw new SecurityError("KEY_CHANGED", `the server now shows ${current}, not the fingerprint you checked`, userId);
    // Whoever else this device had pinned under this email loses it: the person checked is the one it belongs to.
    for (const [other, kept] of await this.core.pins.entries()) {
      const pin = asPin(kept);
      if (other !== bundle.userId && pin.email === bundle.email) await this.core.pins.set(other, { ...pin, email: undefined });
    }
    await this.core.pins.set(bundle.userId, {
      fingerprint: current,
      email: bundle.email,
      via: "checked",
      ...(bundle.keyStatement && { stated: true }),
    });
  }

  /**
   * The organization's people, each bundle checked as `checkBundle` does; one that fails carries
   * its `problem` rather than failing the list (show it; never share with it).
   */
  async orgMembers(): Promise<CheckedMember[]> {
    const { members } = await this.core.http.request<{ members: OrgMember[] }>("GET", `/orgs/${this.core.account.orgId}/members`);
    const index = await this.pinIndex();
    const checked: CheckedMember[] = [];
    for (const m of members) {
      if (m.userId === this.core.account.userId) {
        checked.push({ ...m, trust: "checked" });
        continue;
      }
      try {
        checked.push({ ...m, trust: await this.checkBundle(m, undefined, index) });
      } catch (err) {
        if (!(err instanceof SecurityError)) throw err;
        checked.push({ ...m, problem: err });
      }
    }
    return checked;
  }

  /** A user of the caller's organization by email or id, refused when the server's pairing of id, email and keys does not hold. */
  async findUser(emailOrId: string): Promise<{ userId: string; email: string; role: OrgRole; trust?: TrustLevel }> {
    const found = await this.findMember(emailOrId);
    if (found.problem) throw found.problem;
    return { userId: found.userId, email: found.email, role: found.role, trust: found.trust };
  }

  /** A member of the caller's organization by email or id, with what is wrong with them if anything (to show it, or to check a changed key with them). */
  async findMember(emailOrId: string): Promise<CheckedMember> {
    const id = emailOrId.trim().toLowerCase();
    const address = emailOrNull(emailOrId);
    const found = (await this.orgMembers()).find((m) => m.userId === id || (address !== null && m.email === address));
    if (!found) throw new ApiError(404, "NOT_FOUND", `no user ${emailOrId} in your organization`);
    return found;
  }
}

/**
 * What a bundle must be on its own, before any pin is consulted: the user asked for, its Ed25519
 * key's signature over its RSA key, a normalized email, and its key statement, when it has one,
 * verifying over exactly this id, email and these keys.
 */
async function selfConsistent(
  bundle: ServedBundle,
  expectedUserId?: string,
): Promise<{ userId: string; email: string; keys: string; fingerprint: string }> {
  const userId = bundle.userId;
  if (expectedUserId !== undefined && userId?.toLowerCase() !== expectedUserId.toLowerCase())
    throw new SecurityError("INCONSISTENT", `asked for the keys of ${expectedUserId}, got another user's`, expectedUserId);
  if (!(await bundleSelfSignatureVerifies(bundle)))
    throw new SecurityError("BAD_SIGNATURE", `the key bundle of ${bundle.email ?? userId} is not signed by its own signing key`, userId);
  const email = bundle.email;
  if (typeof email !== "string" || emailOrNull(email) !== email)
    throw new SecurityError("IDENTITY_MISMATCH", `the server gives user ${userId} an address that is not a normalized email`, userId);
  const keys = await keyFingerprint(bundle);
  const fingerprint = groupedFingerprint(keys);
  const statement = bundle.keyStatement;
  if (statement) {
    const bytes = keyStatementBytes({ userId, email, keys, version: statement.version });
    if (!(await statementVerifies(bytes, bundle.signingPublicKey, statement.signature))) {
      throw new SecurityError(
        "IDENTITY_MISMATCH",
        `the server pairs user ${userId}, ${email} and keys ${fingerprint} otherwise than the user's own signed key statement: it does not verify`,
        userId,
      );
    }
  }
  return { userId, email, keys, fingerprint };
}

function keyChanged(userId: string, email: string, pinned: string, now: string): SecurityError {
  return new SecurityError(
    "KEY_CHANGED",
    `the keys of ${email} (user ${userId}) changed since first seen (pinned ${pinned}, now ${now}); check the new fingerprint with them, then trust it`,
    userId,
  );
}

/** The address normalized as the server does, or null for text that is no address we accept. */
function emailOrNull(text: string): string | null {
  try {
    return normalizeEmail(text);
  } catch {
    return null;
  }
}
