/**
 * Who may take one of a process's rekey slots: each slot holds a body of up to
 * REKEY_BODY_LIMIT while it is read and applied, so the process caps them; within the cap, no
 * organization and no user may hold more than its share, so that one tenant's stalled uploads
 * never starve another's rekeys (a rekey is what a removal requires).
 */
export interface SlotShares {
  /** Slots of the process (REKEY_CONCURRENCY). */
  total: number;
  /** Slots one organization may hold at once. */
  perOrg: number;
  /** Slots one user may hold at once. */
  perUser: number;
}

/** Half the slots per organization, a quarter per user, at least one each. */
export function slotShares(total: number): SlotShares {
  return { total, perOrg: Math.max(1, Math.floor(total / 2)), perUser: Math.max(1, Math.floor(total / 4)) };
}

export interface SlotsHeld {
  total: number;
  org: number;
  user: number;
}

export type SlotRefusal = "process-full" | "organization-share" | "user-share";

/** Whether one more slot may be taken, given what is held; the refusal names the share that is used up. */
export function decideSlot(held: SlotsHeld, shares: SlotShares): { ok: true } | { ok: false; refusal: SlotRefusal } {
  if (held.user >= shares.perUser) return { ok: false, refusal: "user-share" };
  if (held.org >= shares.perOrg) return { ok: false, refusal: "organization-share" };
  if (held.total >= shares.total) return { ok: false, refusal: "process-full" };
  return { ok: true };
}
