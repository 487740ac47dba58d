/**
 * What a device remembers so that the server cannot rewrite it later:
 * - pins: each user's key fingerprint with the email it belongs to, from the first contact (or
 *   the invite that vouched for it); a changed key, or the same person under another id or email,
 *   is refused until the user has checked it out of band and trusted it;
 * - roster heads: the highest signed-roster head seen per vault (a rollback or a fork is refused);
 * - KDF parameters: per account (by email), the parameters and salt it logged in with, and the
 *   key that may sign a change of them;
 * - invite secrets: per invited email, the binding secret this device put in the invite link;
 * - known vaults: per account, the vaults it has seen listed and the name each one's verified
 *   roster gave it; a known vault missing from a listing, or its name now on another vault, is
 *   refused until the user confirms it.
 */
import type { KdfParams } from "../protocol/crypto/primitives";
import type { VaultType } from "../protocol/vault-roles";
import type { WrapLabel } from "../protocol/formats/roster-format";

/** Values a client keeps by id, wherever it keeps them (memory, a file, the browser's storage). */
export interface KeptValues<T> {
  get(id: string): Promise<T | undefined>;
  set(id: string, value: T): Promise<void>;
  /** Everything kept, to look a value up by something else than its id (a pin by its email). */
  entries(): Promise<Array<[string, T]>>;
}

/** How this device came to trust a user's key. */
export type PinSource =
  /** The first key it saw for them (trust on first use). */
  | "first-use"
  /** Their invite: the key statement they registered with carried the MAC of the link's binding secret this device made. */
  | "invite"
  /** Its user compared the fingerprint with them out of band and trusted it. */
  | "checked";

export interface Pin {
  /** `groupedFingerprint` of the user's keys. */
  fingerprint: string;
  /** The normalized email the key belongs to; absent in pins kept by releases that did not pin emails. */
  email?: string;
  via?: PinSource;
  /** Their signed key statement was seen: from now on a bundle without one is refused (a downgrade). */
  stated?: boolean;
  /**
   * The key-log version and entry hash this device followed their log to (protocol/formats/key-log.ts); absent
   * until it followed a rotation. A log shorter than this, or with another entry here, is refused.
   */
  keyVersion?: number;
  keyHash?: string;
}

/** Pins by user id. A bare string is a pin kept by an earlier release: the fingerprint alone. */
export type PinStore = KeptValues<Pin | string>;

export const asPin = (kept: Pin | string): Pin => (typeof kept === "string" ? { fingerprint: kept } : kept);

/** The head of a vault's signed roster: its last link's seq and hash. */
export interface RosterHead {
  seq: number;
  hash: string;
}

/**
 * The highest roster head this client has seen, by vault id. A server that later shows an older
 * chain (a rollback: a removal undone) or another link at a seen seq (a fork) is refused.
 */
export type RosterHeadStore = KeptValues<RosterHead>;

/** An account's KDF parameters as this device last logged in with them, and whose key may vouch for a change. */
export interface RememberedKdf {
  kdf: KdfParams;
  userId: string;
  /** The account's Ed25519 public key (base64): a change of parameters must carry its signature. */
  signingPublicKey: string;
  /** The KDF statement version these parameters came with (1 until a signed change). */
  version: number;
  /** The account's organization, as its invite (signed by the inviter) or its first login here gave it. */
  orgId?: string;
  /**
   * A newer account state than `version` that this device saw its account sign a personal wrap
   * under (another device changed the password or rotated keys): kept until a login here takes it up.
   */
  seen?: WrapLabel;
}

/** By normalized email. */
export type KdfMemory = KeptValues<RememberedKdf>;

/** The binding secret of an invite this device made, by the invited (normalized) email. */
export interface InviteSecret {
  inviteId: string;
  /** 32 bytes, base64. */
  secret: string;
}

export type InviteSecretStore = KeptValues<InviteSecret>;

/** A vault as this device last saw it in its account's listing. */
export interface KnownVault {
  /** The name its verified roster gave; absent while no signed link named it. */
  name?: string;
  /** Who signed the link that gave that name. */
  namedBy?: string;
  /** Who started its signed roster (its creator, or the owner who adopted it). */
  createdBy?: string;
  /** Its type as its signed roster started it. */
  vaultType?: VaultType;
}

/**
 * The vaults this device knows, by account (user id): vault id to what it knew of it. A device
 * that kept none (an earlier release) starts from the next listing.
 */
export type KnownVaultStore = KeptValues<Record<string, KnownVault>>;

/** Kept for the life of the process (the CLI keeps its own on disk, the web vault in the browser). */
export class MemoryValues<T> implements KeptValues<T> {
  private readonly values = new Map<string, T>();
  async get(id: string) {
    return this.values.get(id);
  }
  async set(id: string, value: T) {
    this.values.set(id, value);
  }
  async entries() {
    return [...this.values];
  }
}

export class MemoryPinStore extends MemoryValues<Pin | string> {}
export class MemoryRosterHeadStore extends MemoryValues<RosterHead> {}
