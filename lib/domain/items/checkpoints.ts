/** A checkpoint in a vault's item log: an item link and nothing else. */
import { checkpointWithoutLink } from "./refusals";

/** The checkpoint's link, checked against the audit log already: a request without one is refused. */
export function requireCheckpointLink<L>(itemLink: L | undefined): L {
  if (!itemLink) throw checkpointWithoutLink();
  return itemLink;
}
