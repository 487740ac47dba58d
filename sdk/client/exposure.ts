/**
 * The exposure report's reads (the rules: sdk/exposure.ts): the verified roster, the item list
 * checked against the signed item log and the log followed, history and trash as stored, and the
 * member's last recorded change from the audit log (owners and admins; null otherwise).
 */
import { ApiError } from "../errors";
import { exposureOf, type ExposureReport } from "../exposure";
import type { Audit } from "./audit";
import type { History } from "./history";
import type { Items } from "./items";
import type { Rosters } from "./roster";

/** Audit records read at most looking for the member's last change. */
const AUDIT_SCAN = 5_000;

export class Exposures {
  constructor(
    private readonly rosters: Rosters,
    private readonly items: Items,
    private readonly history: History,
    private readonly audit: Audit,
  ) {}

  /** The newest change of `userId` in the vault the audit log records, reading back at most AUDIT_SCAN records. */
  private async lastChange(vaultId: string, userId: string): Promise<string | null> {
    let before: number | undefined;
    for (let read = 0; read < AUDIT_SCAN;) {
      const page = await this.audit.auditLog({ limit: 500, ...(before !== undefined && { before }) });
      const hit = page.events.find((e) => e.actorId === userId && e.vaultId === vaultId);
      if (hit) return hit.at;
      read += page.events.length;
      if (page.nextBefore === null || page.events.length === 0) return null;
      before = page.nextBefore;
    }
    return null;
  }

  async report(vaultId: string, userId: string): Promise<ExposureReport> {
    const roster = await this.rosters.verifiedRoster(vaultId);
    if (!roster)
      throw new ApiError(409, "CONFLICT", `vault ${vaultId} has no signed roster: who was a member when is only the server's word`);
    const items = await this.items.listItems(vaultId);
    const log = await this.items.logs.follow(vaultId, roster);
    const [history, trash] = await Promise.all([this.history.storedHistory(vaultId), this.history.trash(vaultId)]);
    let lastActivity: string | null = null;
    try {
      lastActivity = await this.lastChange(vaultId, userId);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 403)) throw err;
    }
    return exposureOf({
      vaultId,
      userId,
      roster: roster.links,
      items,
      sinceBase: log?.sinceBase ?? [],
      history,
      trash,
      lastActivity,
    });
  }
}
