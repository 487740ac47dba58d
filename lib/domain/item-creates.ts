/**
 * Creates that arrive together for one vault, decided as one group under one lock (the SQL
 * store's group of creates, lib/store/sql/items.ts). Each is decided in arrival order against
 * the vault as the ones accepted before it left it: the sizes its limits are checked against,
 * the ids taken, the item log's head its link must name. So a group decides exactly as the same
 * creates would one after the other; a refused create is that create's answer alone.
 */
import type { UserId } from "./ids";
import { decideItemWriteStep, type ItemLink, type ItemLogEntry, type ItemLogHead } from "./item-log";
import { decideItemCreate, decideItemRead, type ItemWriteDecision, type ItemWriteRequest } from "./items";
import type { VaultRole } from "./types";
import { decideVaultGrowth, type VaultLimits, type VaultSize } from "./vault-limits";

/** One create of the group, as its request states it. */
export interface GroupedCreate {
  actorId: UserId;
  itemId: string;
  write: ItemWriteRequest;
  itemLink?: ItemLink;
}

/** The vault as the group's lock found it (null: no such vault). */
export interface LockedForCreates {
  vaultId: string;
  keyVersion: number;
  itemLog: ItemLogHead | null;
  roster: { seq: number; hash: string } | null;
  /** The vault's items and bytes that count against its limits (its trash included, its history not). */
  firm: VaultSize;
  /** The acting members (those not found are not members, or were taken out of the organization). */
  actors: ReadonlyMap<UserId, { role: VaultRole; signingPublicKey: string }>;
  /** Ids the group names that the vault's items hold, and that its trash holds. */
  taken: ReadonlySet<string>;
  inTrash: ReadonlySet<string>;
}

export type GroupedCreateOutcome =
  { ok: true; decision: ItemWriteDecision; link: ItemLogEntry | undefined } | { ok: false; error: unknown };

/**
 * Decides each create in order. Answers each one's outcome, and the vault's firm size once the
 * accepted ones are stored (what its history is trimmed against).
 */
export function decideGroupedCreates(
  locked: LockedForCreates | null,
  creates: readonly GroupedCreate[],
  limits: VaultLimits,
): { outcomes: GroupedCreateOutcome[]; firm: VaultSize } {
  const firm = { ...(locked?.firm ?? { items: 0, bytes: 0 }) };
  let head = locked?.itemLog ?? null;
  const createdHere = new Set<string>();
  const outcomes = creates.map((c): GroupedCreateOutcome => {
    try {
      const actor = locked?.actors.get(c.actorId);
      if (!locked || !actor) decideItemRead(null);
      const decision = decideItemCreate(
        {
          role: actor.role,
          keyVersion: locked.keyVersion,
          taken: locked.taken.has(c.itemId) || createdHere.has(c.itemId),
          inTrash: locked.inTrash.has(c.itemId),
        },
        c.itemId,
        c.write,
      );
      if (decision.growth) decideVaultGrowth(firm, decision.growth, limits);
      const link = decideItemWriteStep(
        { vaultId: locked.vaultId, actorId: c.actorId, itemLink: c.itemLink },
        { keyVersion: locked.keyVersion, itemLog: head, roster: locked.roster, signingPublicKey: actor.signingPublicKey },
        decision.change,
      );
      // Accepted: what the next create of the group is decided against.
      if (decision.growth) {
        firm.items += decision.growth.items;
        firm.bytes += decision.growth.bytes;
      }
      if (link) head = link.head;
      createdHere.add(c.itemId);
      return { ok: true, decision, link };
    } catch (error) {
      return { ok: false, error };
    }
  });
  return { outcomes, firm };
}
