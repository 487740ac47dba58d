/**
 * People leaving the organization. The server takes a person out at once: their
 * sessions end and every vault refuses them. It cannot sign a roster, so each shared vault others
 * are in still names them, and still has the key they held: `finishRemoval` signs their `remove`
 * link and rekeys each such vault the caller manages, one after the other, with progress; the
 * vaults the caller does not manage are answered back, for their owners.
 */
import { ApiError, SecurityError } from "../errors";
import type { ClientCore } from "./core";
import type { Members } from "./members";
import type { Rekeys } from "./rekey";
import type { RekeyProgress } from "./types";

/** What the server answered: each vault the person was in, and what it needs now. */
export interface Removal {
  userId: string;
  vaults: Array<{ vaultId: string; needs: "rekey" | "none" }>;
  sessionsEnded: number;
}

export interface RemovalFinished {
  /** Vaults whose `remove` link this client signed and which it rekeyed. */
  rekeyed: string[];
  /** Vaults this client could not finish (not a member, or not allowed to remove them), with the reason: their owners do it. */
  left: Array<{ vaultId: string; reason: string }>;
}

export class People {
  constructor(
    private readonly core: ClientCore,
    private readonly members: Members,
    private readonly rekeys: Rekeys,
  ) {}

  /** Takes `userId` out of the organization (or, with one's own id, leaves it). */
  async removeFromOrg(userId: string): Promise<Removal> {
    const { orgId } = this.core.account;
    const res = await this.core.http.request<Removal>("DELETE", `/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(userId)}`);
    if (res.userId !== userId || !Array.isArray(res.vaults))
      throw new SecurityError("INCONSISTENT", `the server answers the removal of ${String(res.userId)}, not of ${userId}`);
    return res;
  }

  /** For each vault the removal left to rekey: the person's signed `remove` link, then a rekey, where this client may. */
  async finishRemoval(
    removal: Removal,
    opts: { onProgress?: (vaultId: string, done: number, total: number, step: RekeyProgress) => void } = {},
  ): Promise<RemovalFinished> {
    const due = removal.vaults.filter((v) => v.needs === "rekey");
    const out: RemovalFinished = { rekeyed: [], left: [] };
    for (const [i, { vaultId }] of due.entries()) {
      try {
        const members = await this.members.members(vaultId);
        if (members.some((m) => m.userId === removal.userId)) await this.members.removeMember(vaultId, removal.userId);
        await this.rekeys.rekey(vaultId, { onProgress: (step) => opts.onProgress?.(vaultId, i, due.length, step) });
        out.rekeyed.push(vaultId);
      } catch (err) {
        // Not a member (404) or not allowed (403): the vault's owners finish it.
        if (!(err instanceof ApiError && (err.status === 404 || err.status === 403))) throw err;
        out.left.push({ vaultId, reason: err.message });
      }
    }
    return out;
  }
}
