/** What a client shows people: a roster link as a sentence (vaultctl and the web vault say the same). */
import { groupedFingerprint } from "../protocol/crypto/keys";
import type { RosterLink } from "../protocol/formats/roster";

/** One link, with `name` turning a user id into what the reader knows them by (an email). */
export function describeLink(link: RosterLink, name: (userId: string) => string): string {
  const subject = link.subjectId ? name(link.subjectId) : "";
  const key = link.subjectKey ? ` (keys ${groupedFingerprint(link.subjectKey).slice(0, 19)}…)` : "";
  switch (link.op) {
    case "create":
      return `created the ${link.vaultType} vault${link.name !== undefined ? ` "${link.name}"` : ""}, as its owner${key}`;
    case "adopt":
      return `adopted a roster for the vault${link.name !== undefined ? ` "${link.name}"` : ""} and its ${link.members!.length} members: ${link.members!.map((m) => `${name(m.userId)} (${m.role})`).join(", ")}`;
    case "rename":
      return `renamed the vault "${link.name}"`;
    case "add":
      return `added ${subject} as ${link.role}${key}`;
    case "role":
      return `made ${subject} ${link.role}`;
    case "remove":
      return link.subjectId === link.actorId ? "left the vault" : `removed ${subject}`;
    case "rekey":
      return `rekeyed: key version ${link.keyVersion}, wrapped for ${link.wraps.length} member${link.wraps.length === 1 ? "" : "s"}`;
    case "rewrap":
      return "wrapped the vault key again for themselves (a new master password)";
    case "rotate":
      return `moved to new keys${key}, signed with the old ones, and wrapped the vault key to them`;
  }
}
