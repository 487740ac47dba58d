/**
 * Other users' keys, and how far this device trusts them: each bundle's self-signature, and the
 * fingerprint pinned on first use (a changed one is refused until its user has checked it out of
 * band and trusted it). The organization's people, as the server lists them.
 */
import { normalizeEmail } from "../email";
import { toBase64 } from "../encoding";
import { ApiError, SecurityError } from "../errors";
import { bundleFingerprint, bundleSelfSignatureVerifies, type PublicKeyBundle } from "../keys";
import type { ClientCore } from "./core";
import type { OrgRole } from "./types";

export type OrgMember = PublicKeyBundle & { email: string; role: OrgRole; createdAt: string };

export class Trust {
  constructor(private readonly core: ClientCore) {}

  /**
   * A user's public keys, checked: the bundle's self-signature verifies, and its fingerprint is
   * the one pinned on first use (else `SecurityError("KEY_CHANGED")` until `trustUser`).
   */
  async userKeys(userId: string): Promise<PublicKeyBundle> {
    const bundle = await this.selfSignedBundle(userId);
    await this.checkPin(bundle.userId, await bundleFingerprint(bundle));
    return bundle;
  }

  /**
   * One's own bundle comes from the unlocked keys (or, locked, the login's copy, checked against
   * its pin); anyone else's through the pinned lookup.
   */
  async keysOf(userId: string): Promise<Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">> {
    const { core } = this;
    if (userId !== core.account.userId) return this.userKeys(userId);
    if (core.keys) return { publicKey: toBase64(core.keys.publicKeyDer), signingPublicKey: toBase64(core.keys.signingPublicKeyRaw) };
    const own = { publicKey: core.account.publicKey, signingPublicKey: core.account.signingPublicKey };
    await this.checkPin(userId, await bundleFingerprint(own));
    return own;
  }

  /** The bundle the server shows for a user, refused unless it is theirs and signed by its own signing key. */
  private async selfSignedBundle(userId: string): Promise<PublicKeyBundle> {
    const bundle = await this.core.http.request<PublicKeyBundle>("GET", `/users/${encodeURIComponent(userId)}/keys`);
    if (bundle.userId?.toLowerCase() !== userId.toLowerCase())
      throw new SecurityError("INCONSISTENT", `asked for the keys of ${userId}, got another user's`, userId);
    if (!(await bundleSelfSignatureVerifies(bundle)))
      throw new SecurityError("BAD_SIGNATURE", `the key bundle of ${bundle.email ?? userId} is not signed by its own signing key`, userId);
    return bundle;
  }

  async checkPin(userId: string, fingerprint: string): Promise<void> {
    const pinned = await this.core.pins.get(userId);
    if (pinned === undefined) await this.core.pins.set(userId, fingerprint);
    else if (pinned !== fingerprint) {
      throw new SecurityError(
        "KEY_CHANGED",
        `the keys of user ${userId} changed since first seen (pinned ${pinned}, now ${fingerprint}); check the new fingerprint with them, then trust it`,
        userId,
      );
    }
  }

  /** The fingerprint the server currently shows for a user, and the pinned one. */
  async fingerprint(userId: string): Promise<{ current: string; pinned?: string }> {
    const bundle = await this.selfSignedBundle(userId);
    return { current: await bundleFingerprint(bundle), pinned: await this.core.pins.get(bundle.userId) };
  }

  /** Accepts a user's changed keys: call only after comparing the fingerprint out of band. */
  async trustUser(userId: string, fingerprint: string): Promise<void> {
    const { current } = await this.fingerprint(userId);
    if (current !== fingerprint)
      throw new SecurityError("KEY_CHANGED", `the server now shows ${current}, not the fingerprint you checked`, userId);
    await this.core.pins.set(userId.toLowerCase(), current);
  }

  async orgMembers(): Promise<OrgMember[]> {
    return (await this.core.http.request<{ members: OrgMember[] }>("GET", `/orgs/${this.core.account.orgId}/members`)).members;
  }

  /** A user of the caller's organization by email or id. */
  async findUser(emailOrId: string): Promise<{ userId: string; email: string; role: OrgRole }> {
    const id = emailOrId.trim().toLowerCase();
    const address = emailOrNull(emailOrId);
    const found = (await this.orgMembers()).find((m) => m.userId === id || (address !== null && m.email === address));
    if (!found) throw new ApiError(404, "NOT_FOUND", `no user ${emailOrId} in your organization`);
    return { userId: found.userId, email: found.email, role: found.role };
  }
}

/** The address normalized as the server does, or null for text that is no address we accept. */
function emailOrNull(text: string): string | null {
  try {
    return normalizeEmail(text);
  } catch {
    return null;
  }
}
