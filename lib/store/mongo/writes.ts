/** Writes that several aggregates make inside their transactions (vaults, and an account's password change and key rotation). */
import type { ClientSession } from "mongodb";
import type { UserId, VaultId } from "../../domain/ids";
import type { RosterEntry } from "../../domain/vaults/roster";
import type { MongoContext } from "./context";
import { rosterLinkKey } from "./documents";

/** Stores a checked link and makes it the vault's head, in the caller's transaction. */
export async function appendRosterLink(
  c: MongoContext,
  session: ClientSession,
  vaultId: VaultId,
  entry: RosterEntry,
  now: string,
): Promise<void> {
  await c.rosterLinks.insertOne(
    { _id: rosterLinkKey(vaultId, entry.seq), vaultId, seq: entry.seq, hash: entry.hash, link: entry.json, createdAt: now },
    { session },
  );
  await c.vaults.updateOne({ _id: vaultId }, { $set: { roster: { seq: entry.seq, hash: entry.hash } } }, { session });
}

/**
 * Writes the account's document (its `writeSeq` bumped: a real write, which a password change's
 * own write conflicts with, so one of the two retries on the other's outcome) and answers its key
 * version (absent: 1).
 */
export async function lockAccount(c: MongoContext, session: ClientSession, userId: UserId): Promise<number> {
  const user = await c.users.findOneAndUpdate(
    { _id: userId },
    { $inc: { writeSeq: 1 } },
    { session, projection: { accountVersion: 1 }, returnDocument: "before" },
  );
  return user?.accountVersion ?? 1;
}

/** The user's personal vaults, by id. */
export async function personalVaultIds(c: MongoContext, session: ClientSession, userId: UserId): Promise<VaultId[]> {
  const memberships = await c.members.find({ userId }, { session, projection: { vaultId: 1 } }).toArray();
  const vaults = await c.vaults
    .find({ _id: { $in: memberships.map((m) => m.vaultId) }, type: "personal" }, { session, projection: { _id: 1 } })
    .sort({ _id: 1 })
    .toArray();
  return vaults.map((v) => v._id);
}

/** Every vault the user is a member of, by id (a key rotation wraps each one's key again). */
export async function memberVaultIds(c: MongoContext, session: ClientSession, userId: UserId): Promise<VaultId[]> {
  const memberships = await c.members
    .find({ userId }, { session, projection: { vaultId: 1 } })
    .sort({ vaultId: 1 })
    .toArray();
  return memberships.map((m) => m.vaultId);
}

/** The user's own wrap of a vault, replaced (a password change, a key rotation), with its link if the vault is signed. */
export async function replaceOwnWrap(
  c: MongoContext,
  session: ClientSession,
  userId: UserId,
  v: { vaultId: VaultId; encryptedVaultKey: string; wrapSignature: string },
  roster: RosterEntry | undefined,
  now: string,
): Promise<void> {
  if (roster) await appendRosterLink(c, session, v.vaultId, roster, now);
  await c.members.updateOne(
    { vaultId: v.vaultId, userId },
    { $set: { encryptedVaultKey: v.encryptedVaultKey, wrapSignature: v.wrapSignature, senderId: userId, updatedAt: now } },
    { session },
  );
  await c.vaults.updateOne({ _id: v.vaultId }, { $set: { updatedAt: now } }, { session });
}
