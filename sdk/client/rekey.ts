/**
 * The rekey: a new vault key, every item re-encrypted under it, the key wrapped for exactly the
 * members the vault's verified roster names, all in one call that the server applies atomically.
 */
import { fromBase64, toBase64, type Bytes } from "../encoding";
import { ApiError, SecurityError } from "../errors";
import { openItem, sealItem, type SealedItem } from "../items";
import { keyFingerprint } from "../keys";
import { AES_KEY_BYTES, aesKwWrap, ed25519Sign, randomBytes, rsaOaepWrap } from "../primitives";
import { memberDigest, rosterWraps } from "../roster";
import { vaultMoved, type ClientCore } from "./core";
import type { Items } from "./items";
import type { Members } from "./members";
import { rosterRaced, type Rosters } from "./roster";
import type { Trust } from "./trust";
import type { MemberEntry, RekeyProgress, RekeyResult, VerifiedRoster } from "./types";
import type { Vaults } from "./vaults";

const MAX_REKEY_ATTEMPTS = 5;

export class Rekeys {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
    private readonly vaults: Vaults,
    private readonly members: Members,
    private readonly items: Items,
  ) {}

  /**
   * A new vault key: every item opened under the old key and sealed under the new one, the new
   * key wrapped for every remaining member (their keys checked and pinned) and signed, all sent
   * in one call. When the vault changed meanwhile (409, or 400 for a member or item set that no
   * longer matches), it starts again from the beginning. On a signed vault the new key goes to
   * exactly the members of the verified roster, each under the keys the roster recorded, and a
   * member list from the server that differs from the roster is refused before anything is sent.
   */
  async rekey(vaultId: string, opts: { onProgress?: (p: RekeyProgress) => void; maxAttempts?: number } = {}): Promise<RekeyResult> {
    const keys = this.core.requireKeys();
    const maxAttempts = opts.maxAttempts ?? MAX_REKEY_ATTEMPTS;
    const progress = opts.onProgress ?? (() => {});
    for (let attempt = 1; ; attempt++) {
      const vault = await this.vaults.getVault(vaultId);
      let oldKey: Bytes, members: MemberEntry[], roster: VerifiedRoster | null;
      try {
        oldKey = await this.vaults.openVault(vault);
        // A member list that disagrees with the signed roster is refused here, before anything is sent.
        ({ members, roster } = await this.members.verifiedMembers(vaultId));
        if (roster && roster.state.keyVersion !== vault.keyVersion) throw vaultMoved();
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && attempt < maxAttempts) continue;
        throw err;
      }
      const stored = await this.items.listStoredItems(vaultId);
      // On a signed vault, the new key goes to the roster's members only.
      const recipients = roster ? [...roster.state.members.keys()] : members.map((m) => m.userId);
      const newKey = randomBytes(AES_KEY_BYTES);

      // Each with the revision it was read at: an item changed since is refused (409) rather than
      // overwritten with this older copy, and the rekey starts again from a fresh read.
      const items: Array<SealedItem & { revision: number }> = [];
      progress({ phase: "items", done: 0, total: stored.length });
      for (const item of stored) {
        items.push({ ...(await sealItem(newKey, vaultId, item.itemId, await openItem(oldKey, vaultId, item))), revision: item.revision });
        progress({ phase: "items", done: items.length, total: stored.length });
      }

      const newKeys: Array<{ userId: string; encryptedVaultKey: string; wrapSignature: string }> = [];
      progress({ phase: "wraps", done: 0, total: recipients.length });
      for (const userId of recipients) {
        let wrapped: Bytes;
        if (vault.vaultType === "personal") wrapped = await aesKwWrap(keys.stretchedKey, newKey);
        else {
          const holder = await this.trust.keysOf(userId);
          const recorded = roster?.state.members.get(userId)?.key;
          if (recorded && (await keyFingerprint(holder)) !== recorded) {
            throw new SecurityError(
              "KEY_CHANGED",
              `the keys the server shows for ${userId} are not the ones the vault's signed roster recorded`,
              userId,
            );
          }
          wrapped = await rsaOaepWrap(fromBase64(holder.publicKey), newKey);
        }
        newKeys.push({
          userId,
          encryptedVaultKey: toBase64(wrapped),
          wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
        });
        progress({ phase: "wraps", done: newKeys.length, total: recipients.length });
      }
      const rosterLink = roster
        ? await this.rosters.nextRosterLink(roster.state, {
            op: "rekey",
            keyVersion: vault.keyVersion + 1,
            memberDigest: await memberDigest(roster.state.members),
            wraps: await rosterWraps(newKeys),
          })
        : undefined;

      progress({ phase: "upload", done: 0, total: 1 });
      try {
        await this.core.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/rekey`, {
          body: { newKeys, items, keyVersion: vault.keyVersion, rosterLink },
        });
      } catch (err) {
        const raced =
          err instanceof ApiError && (err.status === 409 || (err.status === 400 && (err.field === "newKeys" || err.field === "items")));
        if ((raced || rosterRaced(err)) && attempt < maxAttempts) continue;
        throw err;
      }
      await this.rosters.sawRosterLink(rosterLink);
      progress({ phase: "upload", done: 1, total: 1 });
      this.core.vaultKeys.set(vaultId, { keyVersion: vault.keyVersion + 1, key: newKey });
      return { keyVersion: vault.keyVersion + 1, items: items.length, members: newKeys.length, attempts: attempt };
    }
  }
}
