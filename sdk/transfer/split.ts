/**
 * An import split by where the file kept its items at the top (a 1Password vault, a Bitwarden
 * folder's first part, a KeePass top-level group, a LastPass folder's first part), so that a client
 * can make one vault of each. Items kept at no such place form one group with no name.
 */
import type { ImportItem, Parsed } from "./types";

export interface PlaceGroup {
  /** The place's name; undefined for the items kept at none. */
  place?: string;
  items: ImportItem[];
}

/** The parsed items by their place, in the order each place first appears (the items of no place last). */
export function splitByTopLevel(parsed: Pick<Parsed, "items">): PlaceGroup[] {
  const groups = new Map<string | undefined, ImportItem[]>();
  for (const item of parsed.items) {
    const list = groups.get(item.place) ?? [];
    list.push(item);
    groups.set(item.place, list);
  }
  const named = [...groups].filter(([place]) => place !== undefined).map(([place, items]) => ({ place, items }));
  const rest = groups.get(undefined);
  return rest ? [...named, { items: rest }] : named;
}
