/**
 * An item create as one plan (`planItemCreate`): who may write, the key version, the id, the
 * vault's growth, the item log's step. Creates that arrive together for one vault (the SQL store's
 * group of creates, lib/store/sql/items.ts) are the same plan in a loop (`decideGroupedCreates`),
 * each against the vault as the ones accepted before it left it: the sizes its limits are checked
 * against, the ids taken, the item log's head its link must name. So a group decides exactly as
 * the same creates would one after the other; a refused create is that create's answer alone.
 */
import type { UserId } from "../ids";
import { decideItemWriteStep, type ItemLink, type ItemLogEntry, type ItemLogHead } from "./log";
import { decideItemCreate, decideItemRead, type ItemWriteDecision, type ItemWriteRequest } from "./decisions";
import type { VaultRole } from "../types";
import { decideVaultGrowth, type VaultLimits, type VaultSize } from "../vaults/limits";

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

/** The vault as one create's lock found it. */
export interface LockedForCreate {
  vaultId: string;
  keyVersion: number;
  itemLog: ItemLogHead | null;
  roster: { seq: number; hash: string } | null;
  /** The vault's items and bytes that count against its limits (its trash included, its history not). */
  firm: VaultSize;
  /** The acting member; undefined: not a member (or taken out of the organization). */
  actor: { role: VaultRole | null; signingPublicKey: string } | undefined;
  /** The vault's items, or its trash, already hold the create's id. */
  taken: boolean;
  inTrash: boolean;
}

/** What a create writes: the new revision and its growth, and the item log's next link (on a vault with a signed log). */
export interface CreatePlan {
  decision: ItemWriteDecision;
  link: ItemLogEntry | undefined;
}

/** One create, over the vault as its lock found it (null: no such vault): what it writes, or a named refusal. */
export function planItemCreate(locked: LockedForCreate | null, create: GroupedCreate, limits: VaultLimits): CreatePlan {
  const actor = locked?.actor;
  if (!locked || !actor) decideItemRead(null);
  const { keyVersion, taken, inTrash } = locked;
  const decision = decideItemCreate({ role: actor.role, keyVersion, taken, inTrash }, create.itemId, create.write);
  if (decision.growth) decideVaultGrowth(locked.firm, decision.growth, limits);
  const link = decideItemWriteStep(
    { vaultId: locked.vaultId, actorId: create.actorId, itemLink: create.itemLink },
    { keyVersion, itemLog: locked.itemLog, roster: locked.roster, signingPublicKey: actor.signingPublicKey },
    decision.change,
  );
  return { decision, link };
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
      const { decision, link } = planItemCreate(
        locked && {
          ...locked,
          itemLog: head,
          firm,
          actor: locked.actors.get(c.actorId),
          taken: locked.taken.has(c.itemId) || createdHere.has(c.itemId),
          inTrash: locked.inTrash.has(c.itemId),
        },
        c,
        limits,
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
