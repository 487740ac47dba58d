/**
 * Which fields of a page may be filled: only ones the person can see and type into. The content
 * script measures each field; this decides. Apart from the matching rules (fill-rules.ts) so that
 * the content script, which runs in every frame of every page, carries no Public Suffix List.
 */

/** What the content script measures of a field: its type, its box in CSS pixels and its computed style. */
export interface FieldFacts {
  type: string;
  width: number;
  height: number;
  display: string;
  visibility: string;
  /** The opacity the user sees: the field's own multiplied by its ancestors'. */
  opacity: number;
  disabled: boolean;
  readOnly: boolean;
  /** False when the field lies where nobody can scroll to it (`left: -9999px`); a field merely scrolled out of view is in. */
  inViewport?: boolean;
  /** True when an ancestor's overflow or `clip-path` cuts the field out of sight. */
  clipped?: boolean;
}

/** Input types a login is typed into; a checkbox, a button or a file picker takes no username. */
const TEXT_TYPES = new Set(["", "text", "password", "email", "tel", "url", "search", "number"]);
/** Below this many CSS pixels on a side, a field is a dot or a line, not something a person types into. */
const MIN_SIDE = 4;
/** Below this opacity a field cannot be read against its page. */
const MIN_OPACITY = 0.1;

/** Whether a field may be filled: only one the user can see and type into (the content script measures, this decides). */
export function fieldIsFillable(f: FieldFacts): boolean {
  if (!TEXT_TYPES.has(String(f.type ?? "").toLowerCase())) return false;
  // Written as `!(x >= min)` so that a NaN measure refuses too.
  if (!(f.width >= MIN_SIDE) || !(f.height >= MIN_SIDE) || !(f.opacity >= MIN_OPACITY)) return false;
  if (f.display === "none" || f.visibility === "hidden" || f.visibility === "collapse") return false;
  if (f.disabled || f.readOnly || f.clipped === true || f.inViewport === false) return false;
  return true;
}
