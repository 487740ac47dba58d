/** A user's key log, and what a key rotation locks and writes in vaults, on MongoDB (SQL: ../sql/key-log.ts). */
import type { ClientSession } from "mongodb";
import type { UserId, VaultId } from "../../domain/ids";
import type { HeldVault as HeldRotationVault, KeyLogEntry, KeyRotation } from "../../domain/accounts/key-rotation";
import type { RosterEntry } from "../../domain/vaults/roster";
import type { MongoContext } from "./context";
import { keyLogKey } from "./documents";
import { memberVaultIds, replaceOwnWrap } from "./writes";

/** The user's stored key log, oldest first (in the caller's transaction, if given). */
export async function keyLogIn(c: MongoContext, userId: UserId, session?: ClientSession): Promise<KeyLogEntry[]> {
  const docs = await c.keyLog
    .find({ userId }, { session, projection: { entry: 1 } })
    .sort({ version: 1 })
    .toArray();
  return docs.map((d) => JSON.parse(d.entry) as KeyLogEntry);
}

export async function insertKeyLogEntry(
  c: MongoContext,
  session: ClientSession,
  entry: KeyLogEntry,
  hash: string,
  now: string,
): Promise<void> {
  const userId = entry.userId as UserId;
  await c.keyLog.insertOne(
    { _id: keyLogKey(userId, entry.version), userId, version: entry.version, hash, entry: JSON.stringify(entry), createdAt: now },
    { session },
  );
}

/** Every vault the user is in, each locked in id order (its write sequence bumped: a concurrent write to it conflicts and retries), with the wraps they sent there. */
export async function lockHeldVaults(c: MongoContext, session: ClientSession, userId: UserId): Promise<HeldRotationVault[]> {
  const held: HeldRotationVault[] = [];
  for (const vaultId of await memberVaultIds(c, session, userId)) {
    const snapshot = await c.snapshot(session, vaultId);
    if (!snapshot) continue;
    const sentWraps = await c.members
      .find({ vaultId, senderId: userId }, { session, projection: { userId: 1, encryptedVaultKey: 1 } })
      .toArray();
    held.push({ snapshot, sentWraps: sentWraps.map((w) => ({ userId: w.userId, encryptedVaultKey: w.encryptedVaultKey })) });
  }
  return held;
}

/** A rotation's vault writes: each vault's new wrap with its roster link, and the wraps re-signed. */
export async function writeRotatedWraps(
  c: MongoContext,
  session: ClientSession,
  userId: UserId,
  rotation: KeyRotation,
  rosters: ReadonlyMap<VaultId, RosterEntry | undefined>,
  now: string,
): Promise<void> {
  for (const v of rotation.vaults) {
    await replaceOwnWrap(c, session, userId, v, rosters.get(v.vaultId), now);
    if (v.resigned.length > 0)
      await c.members.bulkWrite(
        v.resigned.map((r) => ({
          updateOne: {
            filter: { vaultId: v.vaultId, userId: r.userId, senderId: userId },
            update: { $set: { wrapSignature: r.wrapSignature } },
          },
        })),
        { session, ordered: true },
      );
  }
}
