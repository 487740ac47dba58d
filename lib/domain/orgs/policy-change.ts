/**
 * A change of the organization's policies, checked against the organization it applies to: values
 * within their bounds (`decidePolicies`), and no one shut out without the owner saying so. A policy
 * can be valid and still leave people no way in: invites that expire before anyone can open them, a
 * recovery threshold above the trustees people have, a second factor required when no one who
 * manages the organization has one. Such a change is refused (`policyShutsOut`, 409) naming who is
 * shut out, unless the request confirms each such field (`confirmLockOut`). Only what the change
 * makes worse counts: a lock-out the current policies already had is not asked about again.
 */
import { parseDuration } from "../duration";
import { mayBeTrustee } from "../../../protocol/org-roles";
import type { OrgRole } from "../types";
import { decidePolicies, type OrgPolicies } from "./policies";
import { policyShutsOut } from "./refusals";

/** The policy fields whose change can shut people out, as a request confirms them (`confirmLockOut`). */
export const LOCK_OUT_FIELDS = ["requireSecondFactor", "recoveryMinThreshold", "inviteMaxLifetime"] as const;
export type LockOutField = (typeof LOCK_OUT_FIELDS)[number];

/** The shortest invite lifetime people can be expected to redeem: an invite is mailed, opened, and a master password chosen. */
export const MIN_REDEEMABLE_INVITE_MS = 15 * 60_000;

/** Emails named in a refusal, at most; the rest are counted. */
const NAMED = 5;

/** What the rule knows of a member (one not removed): their address, role, and whether they have a second factor. */
export interface PolicyPerson {
  email: string;
  role: OrgRole;
  hasFactor: boolean;
}

/** One policy field's lock-out: who it shuts out, as a phrase. */
export interface LockOut {
  field: LockOutField;
  who: string;
}

/** Whose second factors the rule looks at: the owners' and admins' (the people who manage the organization). */
export function factorMatters(role: OrgRole): boolean {
  return mayBeTrustee(role);
}

function names(people: readonly PolicyPerson[]): string {
  const shown = people.slice(0, NAMED).map((p) => p.email);
  return people.length > NAMED ? `${shown.join(", ")} and ${people.length - NAMED} more` : shown.join(", ");
}

/** Trustees a person may choose among: the organization's owners and admins, themselves excepted. */
function trusteesOf(person: PolicyPerson, people: readonly PolicyPerson[]): number {
  return people.filter((p) => mayBeTrustee(p.role)).length - (mayBeTrustee(person.role) ? 1 : 0);
}

/** The longest invite lifetime a policy allows, in ms (null: the server's own cap). */
const inviteCap = (p: OrgPolicies) => (p.inviteMaxLifetime === undefined ? null : parseDuration(p.inviteMaxLifetime));
const tooShort = (cap: number | null) => cap !== null && cap < MIN_REDEEMABLE_INVITE_MS;

/** Who `next` shuts out that `current` let in, field by field in LOCK_OUT_FIELDS order. */
export function lockOutsOf(current: OrgPolicies, next: OrgPolicies, people: readonly PolicyPerson[]): LockOut[] {
  const found: LockOut[] = [];
  const managers = people.filter((p) => mayBeTrustee(p.role));
  if (next.requireSecondFactor && !current.requireSecondFactor && managers.length > 0 && managers.every((m) => !m.hasFactor)) {
    found.push({
      field: "requireSecondFactor",
      who: `no owner or admin has a second factor (${names(managers)}): requiring one narrows all their sessions to enrolling one at once, and nobody could manage the organization until someone has`,
    });
  }
  const k = next.recoveryMinThreshold;
  const shut = people.filter((p) => trusteesOf(p, people) < k && trusteesOf(p, people) >= current.recoveryMinThreshold);
  if (shut.length > 0) {
    found.push({
      field: "recoveryMinThreshold",
      who: `a recovery threshold of ${k} needs ${k} trustees among the other owners and admins, and ${names(shut)} would have fewer: they could not set up account recovery`,
    });
  }
  if (tooShort(inviteCap(next)) && !tooShort(inviteCap(current))) {
    found.push({
      field: "inviteMaxLifetime",
      who: `invites lasting at most ${next.inviteMaxLifetime} expire before most people can redeem them (allow at least 15m): nobody new could join`,
    });
  }
  return found;
}

/**
 * The policies to store: within their bounds, then no one shut out but for the fields the request
 * confirms. Refuses with the first unconfirmed field, naming every lock-out it found.
 */
export function planPolicyChange(args: {
  current: OrgPolicies;
  next: OrgPolicies;
  people: readonly PolicyPerson[];
  confirmed: readonly string[];
}): OrgPolicies {
  const next = decidePolicies(args.next);
  const unconfirmed = lockOutsOf(args.current, next, args.people).filter((l) => !args.confirmed.includes(l.field));
  if (unconfirmed.length > 0) throw policyShutsOut(unconfirmed[0]!.field, unconfirmed);
  return next;
}
