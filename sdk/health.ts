/**
 * Password health: which logins hold a weak password, one used by another login, or one not
 * changed for a long time, per vault and over all the vaults given. Computed on the client from
 * the opened items: the server cannot, as it stores only ciphertext.
 *
 * Pure: the strength of a password comes from the caller (`opts.strength`), so that tests need no
 * dictionary and the web vault loads zxcvbn (sdk/password-strength.ts) only for this page. The
 * report holds items' names and ids, never a password.
 */
import type { ItemType } from "./item-types";

/** zxcvbn's score below which a password is weak, as for a master password. */
export const WEAK_BELOW_SCORE = 3;
export const DEFAULT_OLD_AFTER_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;

/** What the report reads of an item (an opened `Item` has it all). */
export interface HealthInput {
  vaultId: string;
  itemId: string;
  name: string;
  /** Absent: a login, as for items of earlier releases. */
  type?: ItemType;
  fields: Record<string, string>;
  updatedAt: string;
}

/** Another item, as named in a report. */
export interface ItemRef {
  vaultId: string;
  itemId: string;
  name: string;
}

export type HealthProblem =
  | { kind: "weak"; score: number }
  /** The same password, compared exactly, in these other logins. */
  | { kind: "reused"; with: ItemRef[] }
  /** Not written since `since` (the item's `updatedAt`). */
  | { kind: "old"; since: string };

export interface ItemHealth extends ItemRef {
  problems: HealthProblem[];
}

export interface HealthCounts {
  /** Logins with a password. */
  checked: number;
  weak: number;
  reused: number;
  old: number;
  /** Logins with at least one problem. */
  affected: number;
}

export interface HealthReport {
  /** The logins with a problem, in the order given. */
  items: ItemHealth[];
  /** Per vault, in the order the vaults first appear among the items. */
  vaults: Array<{ vaultId: string } & HealthCounts>;
  overall: HealthCounts;
}

export interface HealthOptions {
  /** Milliseconds since the epoch; default: the clock. */
  now?: number;
  /** A password is old when its item was not written for more than this many days (default 365). */
  oldAfterDays?: number;
  /** zxcvbn's score (0 to 4) of a password; without it, no password is called weak. */
  strength?: (password: string) => number;
}

const isLoginWithPassword = (i: HealthInput) => (i.type ?? "login") === "login" && (i.fields.password ?? "") !== "";
const ref = ({ vaultId, itemId, name }: HealthInput): ItemRef => ({ vaultId, itemId, name });
const noCounts = (): HealthCounts => ({ checked: 0, weak: 0, reused: 0, old: 0, affected: 0 });

/** Each login's problems, and the counts per vault and overall. */
export function passwordHealth(items: readonly HealthInput[], opts: HealthOptions = {}): HealthReport {
  const logins = items.filter(isLoginWithPassword);
  const byPassword = new Map<string, HealthInput[]>();
  for (const i of logins) {
    const same = byPassword.get(i.fields.password!);
    if (same) same.push(i);
    else byPassword.set(i.fields.password!, [i]);
  }
  const oldBefore = (opts.now ?? Date.now()) - (opts.oldAfterDays ?? DEFAULT_OLD_AFTER_DAYS) * DAY_MS;
  const report: HealthReport = { items: [], vaults: [], overall: noCounts() };
  const perVault = new Map<string, HealthReport["vaults"][number]>();
  for (const i of logins) {
    const password = i.fields.password!;
    const problems: HealthProblem[] = [];
    const score = opts.strength?.(password);
    if (score !== undefined && score < WEAK_BELOW_SCORE) problems.push({ kind: "weak", score });
    const others = byPassword.get(password)!.filter((o) => o !== i);
    if (others.length > 0) problems.push({ kind: "reused", with: others.map(ref) });
    if (Date.parse(i.updatedAt) < oldBefore) problems.push({ kind: "old", since: i.updatedAt });
    if (problems.length > 0) report.items.push({ ...ref(i), problems });
    let vault = perVault.get(i.vaultId);
    if (!vault) {
      vault = { vaultId: i.vaultId, ...noCounts() };
      perVault.set(i.vaultId, vault);
      report.vaults.push(vault);
    }
    count(vault, problems);
    count(report.overall, problems);
  }
  return report;
}

function count(c: HealthCounts, problems: readonly HealthProblem[]) {
  c.checked++;
  if (problems.length > 0) c.affected++;
  for (const p of problems) c[p.kind]++;
}
