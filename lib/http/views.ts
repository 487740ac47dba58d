/** Records as the API shows them to other users: one mapping per shape that several routes answer. */
import type { Caller } from "../domain/types";
import type { SessionRecord, UserRecord } from "../store/port";

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

/** A session as its own user sees it: `current` marks the one the request came with. */
export function sessionView(s: SessionRecord, caller: Caller) {
  return {
    sessionId: s.sessionId,
    deviceName: s.deviceName,
    createdAt: s.createdAt,
    lastUsedAt: s.lastUsedAt,
    address: s.address,
    expiresAt: s.expiresAt,
    current: s.sessionId === caller.sessionId,
  };
}
