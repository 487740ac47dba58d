/**
 * People leaving the organization. The server takes a person out at once: their
 * sessions end and every vault refuses them; the remover's client signs the removal into the
 * organization's log (org-log.ts) in the same request. The server cannot sign a roster, so each
 * shared vault others are in still names them, and still has the key they held: `finishRemoval`
 * signs their `remove` link and rekeys each such vault the caller manages, one after the other,
 * with progress (found from the verified rosters, not only from the server's list); the vaults the
 * caller does not manage are answered back, for their owners. Until then no client of the
 * organization writes to such a vault (`REKEY_REQUIRED`, vaults.ts).
 */
import { ApiError, SecurityError } from "../errors";
import type { ClientCore } from "./core";
import type { Members } from "./members";
import type { OrgLogs } from "./org-log";
import type { Rosters } from "./roster";
import type { Vaults } from "./vaults";
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

/** How often a removal is signed again when another change to the organization's log landed first. */
const MAX_REMOVAL_ATTEMPTS = 3;

export class People {
  constructor(
    private readonly core: ClientCore,
    private readonly members: Members,
    private readonly rekeys: Rekeys,
    private readonly orgLogs: OrgLogs,
    private readonly vaults: Vaults,
    private readonly rosters: Rosters,
  ) {}

  /**
   * Takes `userId` out of the organization (or, with one's own id, leaves it). Where the
   * organization keeps a signed log that names them, the request carries this client's signed
   * `remove` link, which the server appends in the removal's own transaction.
   */
  async removeFromOrg(userId: string): Promise<Removal> {
    const { orgId } = this.core.account;
    for (let attempt = 1; ; attempt++) {
      const state = await this.orgLogs.verified();
      // A locked client (a leave from a logged-in terminal) cannot sign: its removal lands unsigned, and clients show the person as unsigned.
      const signs = state?.members.has(userId) && this.core.keys !== undefined;
      const orgLink = signs ? await this.orgLogs.signNext({ op: "remove", subjectId: userId }, state) : undefined;
      try {
        const res = await this.core.http.request<Removal>(
          "DELETE",
          `/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(userId)}`,
          {
            ...(orgLink && { body: { orgLink } }),
          },
        );
        if (res.userId !== userId || !Array.isArray(res.vaults))
          throw new SecurityError("INCONSISTENT", `the server answers the removal of ${String(res.userId)}, not of ${userId}`);
        if (userId !== this.core.account.userId) await this.orgLogs.verified();
        return res;
      } catch (err) {
        // Another change to the organization's log came first: signed again on the log as it is now.
        if (!(orgLink && err instanceof ApiError && err.status === 409 && err.field === "orgLink.seq" && attempt < MAX_REMOVAL_ATTEMPTS))
          throw err;
      }
    }
  }

  /**
   * Rekeys what the removal left, where this client may: each vault the server names, and each
   * vault this client can read whose verified roster still names the person (the server's list is
   * a hint: a vault it leaves out is found here). Each gets the person's signed `remove` link,
   * then a rekey; a vault this client may not finish is answered back for its owners.
   */
  async finishRemoval(
    removal: Removal,
    opts: { onProgress?: (vaultId: string, done: number, total: number, step: RekeyProgress) => void } = {},
  ): Promise<RemovalFinished> {
    const due = new Set(removal.vaults.filter((v) => v.needs === "rekey").map((v) => v.vaultId));
    for (const vault of await this.vaults.listVaults()) {
      // Every vault, whatever type the server states: the roster says who holds its key.
      if (due.has(vault.vaultId)) continue;
      if ((await this.rosters.verifiedRoster(vault.vaultId))?.state.members.has(removal.userId)) due.add(vault.vaultId);
    }
    const out: RemovalFinished = { rekeyed: [], left: [] };
    for (const [i, vaultId] of [...due].entries()) {
      try {
        const members = await this.members.members(vaultId);
        if (members.some((m) => m.userId === removal.userId)) await this.members.removeMember(vaultId, removal.userId);
        await this.rekeys.rekey(vaultId, { onProgress: (step) => opts.onProgress?.(vaultId, i, due.size, step) });
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
