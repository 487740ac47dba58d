/**
 * Decisions on a vault, taken on a snapshot that an adapter reads inside the transaction that
 * holds the vault's lock. They throw the contract's errors in the contract's order
 * (404 -> 403 -> 400 meaning -> 409) and return what to write.
 */
import { vaultIdFor, type ItemId, type OrgId, type UserId, type VaultId } from "../ids";
import { vaultNotFound } from "../items/refusals";
import {
  addedAsOwner,
  alreadyMember,
  memberNotFound,
  personalOwnerStays,
  recipientNotFound,
  rosterLinkMissing,
  rosterNotAdopted,
  vaultIdNotDerived,
} from "./refusals";
import { checkWrap } from "../accounts/keys";
import { assertExactItemSet, assertExactMemberSet, assertItemRevisions, assertKeyVersion } from "./rekey";
import {
  checkRosterLink,
  keyFingerprint,
  ROSTER_LINK_FIELD,
  type RequestedChange,
  type RosterEntry,
  type RosterHead,
  type RosterLink,
  type RosterState,
  type WrapOf as RosterWrapOf,
} from "./roster";
import {
  assertMayDo,
  assertMayRemoveMember,
  assertOwnerRemains,
  assertShareable,
  rekeyRequiredAfterRemoval,
  type VaultAction,
} from "./roles";
import type { VaultRole, VaultType } from "../types";
import type { ItemLogHead } from "../items/log";

export interface VaultState {
  vaultId: VaultId;
  orgId: OrgId;
  type: VaultType;
  name: string;
  keyVersion: number;
  rekeyRequired: boolean;
  /** The head of the vault's signed roster; null for a vault without one. */
  roster: RosterHead | null;
  /** The head of the vault's signed item log; null for a vault without one. */
  itemLog: ItemLogHead | null;
}

export interface MemberState {
  userId: UserId;
  role: VaultRole;
  publicKey: string;
  signingPublicKey: string;
  /** Taken out of the organization: still on the vault (its roster names them until a manager's `remove` link), but acting no more. */
  removed?: boolean;
}

export interface VaultSnapshot {
  vault: VaultState;
  members: MemberState[];
}

/** The caller's membership, or `404` for the vault: no route reveals that a vault exists. */
export function requireMember(snapshot: VaultSnapshot | null, actorId: UserId): MemberState {
  const actor = snapshot?.members.find((m) => m.userId === actorId && !m.removed);
  if (!actor) throw vaultNotFound();
  return actor;
}

/** Membership plus the role check for one action. */
export function requirePermission(snapshot: VaultSnapshot | null, actorId: UserId, action: VaultAction): MemberState {
  const actor = requireMember(snapshot, actorId);
  assertMayDo(actor.role, action);
  return actor;
}

export interface Recipient {
  userId: UserId;
  orgId: OrgId;
  publicKey: string;
  signingPublicKey: string;
}

/** The roster state a signed vault is in, as the server's rows give it (they change only with their link). */
function rosterStateOf(snapshot: VaultSnapshot): RosterState | null {
  const { vault, members } = snapshot;
  if (!vault.roster) return null;
  return {
    vaultId: vault.vaultId,
    vaultType: vault.type,
    seq: vault.roster.seq,
    head: vault.roster.hash,
    keyVersion: vault.keyVersion,
    members: new Map(members.map((m) => [m.userId, { role: m.role, key: keyFingerprint(m) }])),
    wraps: new Map(),
    rekeyRequired: vault.rekeyRequired,
  };
}

/**
 * The roster step of a membership change, rename or rekey, checked after every other rule: a
 * signed vault changes only with a valid next link (returned, to be stored in the same
 * transaction); a vault without a roster takes no link, except the `adopt` link of a rekey, which
 * starts its roster.
 */
export function rosterStep(
  snapshot: VaultSnapshot,
  actor: MemberState,
  link: RosterLink | undefined,
  keyVersionAfter: number,
  change: RequestedChange,
): RosterEntry | undefined {
  if (!snapshot.vault.roster) {
    if (link) throw rosterNotAdopted(ROSTER_LINK_FIELD);
    return undefined;
  }
  if (!link) throw rosterLinkMissing(ROSTER_LINK_FIELD);
  return checkRosterLink(link, { before: rosterStateOf(snapshot), actor, keyVersionAfter, change });
}

/** A rename: the role rule, then on a signed vault its `rename` link naming exactly the new name. */
export function decideRename(
  snapshot: VaultSnapshot | null,
  actorId: UserId,
  name: string,
  rosterLink?: RosterLink,
): RosterEntry | undefined {
  const actor = requirePermission(snapshot, actorId, "rename");
  return rosterStep(snapshot!, actor, rosterLink, snapshot!.vault.keyVersion, { op: "rename", name });
}

/** A new vault created with a `create` link: the link checked (its vaultId becomes the vault's; its name, when it names one, the request's). */
export function decideCreateRoster(
  creator: { userId: UserId; publicKey: string; signingPublicKey: string },
  input: { vaultType: VaultType; name: string; encryptedVaultKey: string },
  link: RosterLink,
): RosterEntry {
  const entry = checkRosterLink(link, {
    before: null,
    actor: creator,
    keyVersionAfter: 1,
    change: {
      op: "create",
      vaultType: input.vaultType,
      name: input.name,
      wraps: [{ userId: creator.userId, encryptedVaultKey: input.encryptedVaultKey }],
    },
  });
  // The id is the creator's own (derived from them and their wrap): another organization's vault
  // id can never be named here, so a create answers alike for every id that is not derived.
  if (link.vaultId !== vaultIdFor(creator.userId, input.encryptedVaultKey)) throw vaultIdNotDerived();
  return entry;
}

/**
 * The rekey of a vault without a roster that starts one: an owner's `adopt` link lists exactly the
 * current members (role and key fingerprint) and the hash of each one's new wrap, at the key
 * version the rekey makes. Adopting is always a rekey: the owner vouches only for wraps they made.
 */
function adoptStep(snapshot: VaultSnapshot, actor: MemberState, link: RosterLink, newWraps: RosterWrapOf[]): RosterEntry {
  const { vault, members } = snapshot;
  assertMayDo(actor.role, "adoptRoster");
  return checkRosterLink(link, {
    before: null,
    actor,
    keyVersionAfter: vault.keyVersion + 1,
    change: {
      op: "adopt",
      vaultType: vault.type,
      name: vault.name,
      wraps: newWraps,
      members: members.map((m) => ({ userId: m.userId, role: m.role, key: keyFingerprint(m) })),
    },
  });
}

export function decideAddMember(
  snapshot: VaultSnapshot | null,
  actorId: UserId,
  recipient: Recipient | null,
  input: { role: VaultRole; encryptedVaultKey: string; wrapSignature: string; keyVersion?: number; rosterLink?: RosterLink },
): RosterEntry | undefined {
  const actor = requireMember(snapshot, actorId);
  const { vault, members } = snapshot!;
  if (!recipient || recipient.orgId !== vault.orgId) throw recipientNotFound();
  assertMayDo(actor.role, "addMember");
  assertShareable(vault.type);
  if (input.role === "owner") throw addedAsOwner();
  checkWrap({
    vaultType: vault.type,
    encryptedVaultKey: input.encryptedVaultKey,
    wrapSignature: input.wrapSignature,
    holderPublicKey: recipient.publicKey,
    senderSigningPublicKey: actor.signingPublicKey,
  });
  if (members.some((m) => m.userId === recipient.userId)) throw alreadyMember();
  assertKeyVersion(vault.keyVersion, input.keyVersion);
  return rosterStep(snapshot!, actor, input.rosterLink, vault.keyVersion, {
    op: "add",
    subjectId: recipient.userId,
    role: input.role,
    subjectKey: keyFingerprint({ publicKey: recipient.publicKey, signingPublicKey: recipient.signingPublicKey }),
    wraps: [{ userId: recipient.userId, encryptedVaultKey: input.encryptedVaultKey }],
  });
}

export function decideRemoveMember(
  snapshot: VaultSnapshot | null,
  actorId: UserId,
  targetId: UserId,
  rosterLink?: RosterLink,
): { rekeyRequired: boolean; roster?: RosterEntry } {
  const actor = requireMember(snapshot, actorId);
  const { vault, members } = snapshot!;
  const target = members.find((m) => m.userId === targetId);
  if (!target) throw memberNotFound();
  assertMayRemoveMember(actor.role, target.role, actorId === targetId);
  assertOwnerRemains(members.filter((m) => m.role === "owner").length, target.role, null);
  const roster = rosterStep(snapshot!, actor, rosterLink, vault.keyVersion, { op: "remove", subjectId: targetId });
  return { rekeyRequired: rekeyRequiredAfterRemoval(vault.type, members.length - 1), roster };
}

export function decideRoleChange(
  snapshot: VaultSnapshot | null,
  actorId: UserId,
  targetId: UserId,
  role: VaultRole,
  rosterLink?: RosterLink,
): RosterEntry | undefined {
  const actor = requireMember(snapshot, actorId);
  const { vault, members } = snapshot!;
  const target = members.find((m) => m.userId === targetId);
  if (!target) throw memberNotFound();
  assertMayDo(actor.role, "changeRole");
  if (vault.type === "personal" && role !== "owner") throw personalOwnerStays();
  assertOwnerRemains(members.filter((m) => m.role === "owner").length, target.role, role);
  return rosterStep(snapshot!, actor, rosterLink, vault.keyVersion, { op: "role", subjectId: targetId, role });
}

/**
 * A member's own wrap made again, for the key the vault is at (a master password change, for a
 * personal vault): the wrap has the holder's size and their signature; the key version is the
 * vault's (else `409`: a rekey came first); a signed vault takes it only with its `rewrap` link.
 */
export function decideRewrap(
  snapshot: VaultSnapshot | null,
  actorId: UserId,
  input: { keyVersion: number; encryptedVaultKey: string; wrapSignature: string; rosterLink?: RosterLink },
): RosterEntry | undefined {
  const actor = requireMember(snapshot, actorId);
  const { vault } = snapshot!;
  checkWrap({
    vaultType: vault.type,
    encryptedVaultKey: input.encryptedVaultKey,
    wrapSignature: input.wrapSignature,
    holderPublicKey: actor.publicKey,
    senderSigningPublicKey: actor.signingPublicKey,
  });
  assertKeyVersion(vault.keyVersion, input.keyVersion);
  return rosterStep(snapshot!, actor, input.rosterLink, vault.keyVersion, {
    op: "rewrap",
    subjectId: actorId,
    subjectKey: keyFingerprint(actor),
    wraps: [{ userId: actorId, encryptedVaultKey: input.encryptedVaultKey }],
  });
}

/**
 * A rekey replaces every wrap and every item: the member and item sets must be exactly the
 * vault's, every wrap must have the holder's size and the caller's signature.
 */
export function decideRekey(
  snapshot: VaultSnapshot | null,
  actorId: UserId,
  currentItems: ReadonlyMap<string, number>,
  input: {
    newKeys: Array<{ userId: UserId; encryptedVaultKey: string; wrapSignature: string }>;
    items: Array<{ itemId: ItemId; revision?: number }>;
    keyVersion?: number;
    rosterLink?: RosterLink;
  },
): RosterEntry | undefined {
  const actor = requirePermission(snapshot, actorId, "rekey");
  const { vault, members } = snapshot!;
  assertExactMemberSet(
    members.map((m) => m.userId),
    input.newKeys.map((k) => k.userId),
  );
  assertExactItemSet(
    currentItems.keys(),
    input.items.map((i) => i.itemId),
  );
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
  if (!vault.roster && input.rosterLink?.op === "adopt") return adoptStep(snapshot!, actor, input.rosterLink, input.newKeys);
  return rosterStep(snapshot!, actor, input.rosterLink, vault.keyVersion + 1, { op: "rekey", wraps: input.newKeys });
}
