/**
 * Signed-roster links built the way an independent client would: node:crypto for SHA-256 and
 * Ed25519 (the SDK uses WebCrypto), over the canonical bytes of protocol/formats/roster.ts.
 */
import { createHash, sign } from "node:crypto";
import {
  GENESIS_PREV,
  linkBytes,
  linkSigningBytes,
  memberSetBytes,
  type RosterLink,
  type RosterMember,
  type UnsignedLink,
} from "../../protocol/formats/roster";
import type { KeyObject } from "node:crypto";
import { vaultIdFor } from "../../lib/domain/ids";

/** Anyone who signs links: a user id and an Ed25519 private key. */
export interface Signer {
  userId: string;
  keys: { edPrivate: KeyObject };
}

/** A user's public keys as registered. */
export interface PublicKeys {
  publicKey: string;
  signingPublicKey: string;
}

export const sha256Hex = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** SHA-256 over the user's RSA SPKI DER and raw Ed25519 key, hex. */
export const fingerprintOf = (keys: PublicKeys) =>
  sha256Hex(Buffer.concat([Buffer.from(keys.publicKey, "base64"), Buffer.from(keys.signingPublicKey, "base64")]));

export const wrapHash = (encryptedVaultKey: string) => sha256Hex(Buffer.from(encryptedVaultKey, "base64"));

export const linkHashOf = (link: UnsignedLink) => sha256Hex(linkBytes(link));

export function signAs(user: Signer, link: UnsignedLink): RosterLink {
  return { ...link, sig: sign(null, linkSigningBytes(link), user.keys.edPrivate).toString("base64") };
}

export const memberDigestOf = (members: RosterMember[]) => sha256Hex(memberSetBytes(members));

type Fields = Omit<UnsignedLink, "vaultId" | "seq" | "prev" | "actorId" | "at" | "keyVersion"> & { keyVersion?: number };

/** A chain as one test client follows it: the head, and the next link by any user. */
export class Chain {
  seq = -1;
  head = GENESIS_PREV;
  keyVersion = 1;
  readonly members = new Map<string, RosterMember>();

  /** A new vault's id is derived at its `create` link (createLink); until then, any placeholder. */
  constructor(public vaultId: string) {}

  /** The next link, signed by `actor` (not yet accepted). */
  next(actor: Signer, fields: Fields): RosterLink {
    return signAs(actor, {
      vaultId: this.vaultId,
      seq: this.seq + 1,
      prev: this.head,
      actorId: actor.userId,
      at: new Date().toISOString(),
      keyVersion: this.keyVersion,
      ...fields,
    });
  }

  /** The server took it: it is the head now. */
  accept(link: RosterLink): void {
    this.seq = link.seq;
    this.head = linkHashOf(link);
    this.keyVersion = link.keyVersion;
  }

  memberDigest(): string {
    return memberDigestOf([...this.members.values()]);
  }
}

/** The `create` link of a new shared vault whose creator's wrap is `encryptedVaultKey`. */
export function createLink(chain: Chain, creator: Signer & PublicKeys, encryptedVaultKey: string): RosterLink {
  chain.vaultId = vaultIdFor(creator.userId, encryptedVaultKey);
  chain.members.set(creator.userId, { userId: creator.userId, role: "owner", key: fingerprintOf(creator) });
  return chain.next(creator, {
    op: "create",
    keyVersion: 1,
    vaultType: "shared",
    subjectId: creator.userId,
    role: "owner",
    subjectKey: fingerprintOf(creator),
    wraps: [{ userId: creator.userId, sha256: wrapHash(encryptedVaultKey) }],
  });
}
