/** Records as the API shows them to other users: one mapping per shape that several routes answer. */
import type { UserRecord } from "../store/port";

/** A user's public keys as others see them, with their signed key statement and invite binding where they have one. */
export function publicKeysOf(user: UserRecord) {
  return {
    userId: user.userId,
    email: user.email,
    publicKey: user.publicKey,
    signingPublicKey: user.signingPublicKey,
    publicKeySignature: user.publicKeySignature,
    ...(user.keyStatement && { keyStatement: user.keyStatement }),
    ...(user.inviteBinding && { inviteBinding: user.inviteBinding }),
  };
}
