/** Records as the API shows them to other users: one mapping per shape that several routes answer. */
import type { UserRecord } from "../store/port";

/** A user's public keys as others see them, with their signed key statement where they have one. */
export function signedKeysOf(user: UserRecord) {
  return {
    userId: user.userId,
    email: user.email,
    publicKey: user.publicKey,
    signingPublicKey: user.signingPublicKey,
    publicKeySignature: user.publicKeySignature,
    ...(user.keyStatement && { keyStatement: user.keyStatement }),
  };
}

/** `signedKeysOf`, with the invite binding the user registered with, for their inviter to check (key lookups, the member list). */
export function publicKeysOf(user: UserRecord) {
  return { ...signedKeysOf(user), ...(user.inviteBinding && { inviteBinding: user.inviteBinding }) };
}
