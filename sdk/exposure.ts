/**
 * The exposure report after a removal: which secrets a removed member could have read,
 * so that the people left change them. Built on the client from what it verified: the vault's
 * signed roster (when the person was a member, which key versions they held), the signed item
 * log (which items changed after the removal), and what the server keeps (history and trash,
 * their dates the server's word). A checklist: an item clears once its secret is changed by a
 * write signed after the removal.
 *
 * Pure: the inputs are read and verified by the client (sdk/client/exposure.ts).
 */
import type { ItemLink } from "../protocol/formats/item-log";
import type { RosterLink } from "../protocol/formats/roster";

export interface Membership {
  /** When they joined (the link's `at`, the signer's claim) and its roster seq. */
  from: { seq: number; at: string; keyVersion: number };
  /** When they were removed (null: still a member). */
  until: { seq: number; at: string; keyVersion: number } | null;
}

/** Every time `userId` was a member of the vault, from its verified roster. */
export function membershipsOf(roster: readonly RosterLink[], userId: string): Membership[] {
  const out: Membership[] = [];
  let open: Membership["from"] | null = null;
  for (const l of roster) {
    const joins =
      ((l.op === "create" || l.op === "add") && l.subjectId === userId) ||
      (l.op === "adopt" && (l.members ?? []).some((m) => m.userId === userId));
    if (joins && !open) open = { seq: l.seq, at: l.at, keyVersion: l.keyVersion };
    const leaves =
      (l.op === "remove" && l.subjectId === userId) || (l.op === "adopt" && open && !(l.members ?? []).some((m) => m.userId === userId));
    if (leaves && open) {
      out.push({ from: open, until: { seq: l.seq, at: l.at, keyVersion: l.keyVersion } });
      open = null;
    }
  }
  if (open) out.push({ from: open, until: null });
  return out;
}

export interface ExposureItem {
  itemId: string;
  name: string;
  /** `exposed`: its secret is as the removed member could read it; `changed`: written again after the removal (cleared). */
  status: "exposed" | "changed";
  /** How that is known: a signed item-log link, or (no link this client holds touches it since the last checkpoint or rekey) assumed exposed. */
  basis: "signed log" | "unchanged since the log's base";
  /** Kept revisions of it written before the removal (the server's dates): readable by the member too. */
  revisions: number;
}

export interface ExposureReport {
  vaultId: string;
  userId: string;
  memberships: Membership[];
  /** The key versions they held, lowest and highest. */
  keyVersions: { from: number; to: number } | null;
  items: ExposureItem[];
  /** Trashed items whose content predates the removal (the server's dates). */
  trash: Array<{ itemId: string; name: string; deletedAt: string }>;
  /** Their last change in the vault the audit log records (reads are not recorded): null when none, or the log could not be read. */
  lastActivity: string | null;
}

/**
 * The report for `userId`'s last membership: every current item created before the removal (by
 * its signed link, or not touched since the log's base) is exposed unless a content write signed
 * after the removal (an update or a restore on a roster at or after the removal's seq) changed it.
 */
export function exposureOf(input: {
  vaultId: string;
  userId: string;
  roster: readonly RosterLink[];
  items: ReadonlyArray<{ itemId: string; name: string }>;
  sinceBase: readonly ItemLink[];
  history: ReadonlyArray<{ itemId: string; createdAt: string }>;
  trash: ReadonlyArray<{ itemId: string; name: string; updatedAt: string; deletedAt: string }>;
  lastActivity: string | null;
}): ExposureReport {
  const memberships = membershipsOf(input.roster, input.userId);
  const last = memberships.at(-1);
  const removal = last?.until ?? null;
  const report: ExposureReport = {
    vaultId: input.vaultId,
    userId: input.userId,
    memberships,
    keyVersions: memberships.length ? { from: memberships[0]!.from.keyVersion, to: removal?.keyVersion ?? last!.from.keyVersion } : null,
    items: [],
    trash: [],
    lastActivity: input.lastActivity,
  };
  if (!last) return report;
  const removedAt = removal?.at ?? "9999-12-31T23:59:59.999Z";
  const removedSeq = removal?.seq ?? Number.MAX_SAFE_INTEGER;
  // Each item's content writes since the base, and its revisions kept from before the removal, read once: not per item.
  const writesOf = new Map<string, ItemLink[]>();
  for (const l of input.sinceBase) {
    if (!l.itemId || !(l.op === "create" || l.op === "update" || l.op === "restore")) continue;
    const list = writesOf.get(l.itemId);
    if (list) list.push(l);
    else writesOf.set(l.itemId, [l]);
  }
  const keptBefore = new Map<string, number>();
  for (const r of input.history) if (r.createdAt < removedAt) keptBefore.set(r.itemId, (keptBefore.get(r.itemId) ?? 0) + 1);
  for (const item of input.items) {
    const writes = writesOf.get(item.itemId) ?? [];
    const lastWrite = writes.at(-1);
    const created = writes.findLast((l) => l.op === "create");
    // Created after the removal: never readable by them.
    if (created && created.rosterSeq >= removedSeq && writes.every((l) => l.rosterSeq >= removedSeq)) continue;
    const revisions = keptBefore.get(item.itemId) ?? 0;
    if (!lastWrite) {
      report.items.push({ itemId: item.itemId, name: item.name, status: "exposed", basis: "unchanged since the log's base", revisions });
      continue;
    }
    const changed = lastWrite.op === "update" && lastWrite.rosterSeq >= removedSeq;
    report.items.push({ itemId: item.itemId, name: item.name, status: changed ? "changed" : "exposed", basis: "signed log", revisions });
  }
  for (const t of input.trash) if (t.updatedAt < removedAt) report.trash.push({ itemId: t.itemId, name: t.name, deletedAt: t.deletedAt });
  report.items.sort((a, b) => (a.status === b.status ? a.name.localeCompare(b.name) : a.status === "exposed" ? -1 : 1));
  return report;
}
