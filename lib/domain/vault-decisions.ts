/**
 * Decisions on a vault, taken on a snapshot that an adapter reads inside the transaction that
 * holds the vault's lock. They throw the contract's errors in the contract's order
 * (404 -> 403 -> 400 meaning -> 409) and return what to write.
 */
import { conflict, invalid, notFound } from "../errors";
import { checkWrap } from "./keys";
import { assertExactItemSet, assertExactMemberSet, assertItemRevisions, assertKeyVersion } from "./rekey";
import { assertMayDo, assertMayRemoveMember, assertOwnerRemains, assertShareable, rekeyRequiredAfterRemoval, type VaultAction } from "./vault-rules";
import type { VaultRole, VaultType } from "./types";

export interface VaultState {
  vaultId: string;
  orgId: string;
  type: VaultType;
  keyVersion: number;
}

export interface MemberState {
  userId: string;
  role: VaultRole;
  publicKey: string;
  signingPublicKey: string;
}

export interface VaultSnapshot {
  vault: VaultState;
  members: MemberState[];
}

/** The caller's membership, or `404` for the vault: no route reveals that a vault exists. */
export function requireMember(snapshot: VaultSnapshot | null, actorId: string): MemberState {
  const actor = snapshot?.members.find((m) => m.userId === actorId);
  if (!actor) throw notFound("Vault");
  return actor;
}

/** Membership plus the role check for one action. */
export function requirePermission(snapshot: VaultSnapshot | null, actorId: string, action: VaultAction): MemberState {
  const actor = requireMember(snapshot, actorId);
  assertMayDo(actor.role, action);
  return actor;
}

export interface Recipient {
  userId: string;
  orgId: string;
  publicKey: string;
}

export function decideAddMember(
  snapshot: VaultSnapshot | null,
  actorId: string,
  recipient: Recipient | null,
  input: { role: VaultRole; encryptedVaultKey: string; wrapSignature: string; keyVersion?: number },
): void {
  const actor = requireMember(snapshot, actorId);
  const { vault, members } = snapshot!;
  if (!recipient || recipient.orgId !== vault.orgId) throw notFound("Recipient");
  assertMayDo(actor.role, "addMember");
  assertShareable(vault.type);
  if (input.role === "owner") throw invalid("A new member's role is admin or member", "role");
  checkWrap({
    vaultType: vault.type,
    encryptedVaultKey: input.encryptedVaultKey,
    wrapSignature: input.wrapSignature,
    holderPublicKey: recipient.publicKey,
    senderSigningPublicKey: actor.signingPublicKey,
  });
  if (members.some((m) => m.userId === recipient.userId)) throw conflict("The recipient is already a member of this vault", "recipientUserId");
  assertKeyVersion(vault.keyVersion, input.keyVersion);
}

export function decideRemoveMember(snapshot: VaultSnapshot | null, actorId: string, targetId: string): { rekeyRequired: boolean } {
  const actor = requireMember(snapshot, actorId);
  const { vault, members } = snapshot!;
  const target = members.find((m) => m.userId === targetId);
  if (!target) throw notFound("Member");
  assertMayRemoveMember(actor.role, target.role, actorId === targetId);
  assertOwnerRemains(members.filter((m) => m.role === "owner").length, target.role, null);
  return { rekeyRequired: rekeyRequiredAfterRemoval(vault.type, members.length - 1) };
}

export function decideRoleChange(snapshot: VaultSnapshot | null, actorId: string, targetId: string, role: VaultRole): void {
  const actor = requireMember(snapshot, actorId);
  const { vault, members } = snapshot!;
  const target = members.find((m) => m.userId === targetId);
  if (!target) throw notFound("Member");
  assertMayDo(actor.role, "changeRole");
  if (vault.type === "personal" && role !== "owner") throw invalid("The owner of a personal vault stays its owner", "role");
  assertOwnerRemains(members.filter((m) => m.role === "owner").length, target.role, role);
}

/**
 * A rekey replaces every wrap and every item: the member and item sets must be exactly the
 * vault's, every wrap must have the holder's size and the caller's signature.
 */
export function decideRekey(
  snapshot: VaultSnapshot | null,
  actorId: string,
  currentItems: ReadonlyMap<string, number>,
  input: { newKeys: Array<{ userId: string; encryptedVaultKey: string; wrapSignature: string }>; items: Array<{ itemId: string; revision?: number }>; keyVersion?: number },
): void {
  const actor = requirePermission(snapshot, actorId, "rekey");
  const { vault, members } = snapshot!;
  assertExactMemberSet(members.map((m) => m.userId), input.newKeys.map((k) => k.userId));
  assertExactItemSet(currentItems.keys(), input.items.map((i) => i.itemId));
  const holders = new Map(members.map((m) => [m.userId, m]));
  for (const key of input.newKeys) {
    checkWrap({
      vaultType: vault.type,
      encryptedVaultKey: key.encryptedVaultKey,
      wrapSignature: key.wrapSignature,
      holderPublicKey: holders.get(key.userId)!.publicKey,
      senderSigningPublicKey: actor.signingPublicKey,
    });
  }
  assertKeyVersion(vault.keyVersion, input.keyVersion);
  assertItemRevisions(currentItems, input.items);
}
