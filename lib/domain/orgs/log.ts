/**
 * The server's side of the signed organization log (the protocol, the rules every client replays:
 * protocol/formats/org-log.ts). The server cannot sign a link; it keeps the chain whole (each link
 * the next one on the stored head, under the organization's lock) and refuses a link that is not
 * signed by the caller with their registered key, or that says something other than what the
 * server just did or holds:
 *
 * - `adopt` (an owner, the log's first link): exactly the organization's members, roles, emails and keys;
 * - `join`: the caller's own entry as registered (their id, email, role and keys);
 * - `remove`: only with the removal itself (`DELETE /orgs/:orgId/members/:userId`), naming that person.
 *
 * Clients check the rest (who signed each invite, who may remove whom) when they replay the log.
 */
import { fromBase64 } from "../../../protocol/encoding";
import { keyFingerprint } from "../../../protocol/crypto/keys";
import { RosterLinkError } from "../../../protocol/formats/links";
import { orgLinkHash, orgLinkSignatureVerifies, parseOrgLink, type OrgLink, type OrgLogMember } from "../../../protocol/formats/org-log";
import type { OrgId, UserId } from "../ids";
import type { OrgRole } from "../types";
import { orgLinkRefused, orgLogMoved } from "./refusals";

/** A link the server accepted, as stored: its place, its hash (the next one's `prev`), and the link. */
export interface OrgLogEntry {
  seq: number;
  prev: string;
  hash: string;
  link: OrgLink;
}

/** The stored head: the last link's seq and hash; null for a log not started. */
export type OrgLogHead = { seq: number; hash: string } | null;

/** A person as the server holds them, for the comparison of a link with its state. */
export interface OrgPersonKeys {
  userId: UserId;
  email: string;
  role: OrgRole;
  publicKey: string;
  signingPublicKey: string;
}

/** What the link is checked against. */
export interface OrgLinkContext {
  orgId: OrgId;
  /** The caller, as stored (their keys verify the signature). */
  caller: OrgPersonKeys;
  /** The organization's members now, read only for an adoption. */
  members?: () => Promise<readonly OrgPersonKeys[]>;
  /** The person being removed in the same request (remove only). */
  removing?: UserId;
  /** The request field the link came in, for the refusal's field: `link` or `orgLink`. */
  field: string;
}

const asMember = async (p: OrgPersonKeys): Promise<OrgLogMember> => ({
  userId: p.userId,
  email: p.email,
  role: p.role,
  key: await keyFingerprint(p),
});

const sameMember = (a: OrgLogMember, b: OrgLogMember) =>
  a.userId === b.userId && a.email === b.email && a.role === b.role && a.key === b.key;

/** The link checked against the caller and the server's state, with its hash: what the store appends (after `decideOrgLogStep`). */
export async function planOrgLink(raw: unknown, c: OrgLinkContext): Promise<OrgLogEntry> {
  let link: OrgLink;
  try {
    link = parseOrgLink(raw);
  } catch (err) {
    if (err instanceof RosterLinkError) throw orgLinkRefused(c.field, err.field, err.message);
    throw err;
  }
  const refuse = (field: string, why: string) => orgLinkRefused(c.field, field, why);
  if (link.orgId !== c.orgId) throw refuse("orgId", "the link names another organization");
  if (link.actorId !== c.caller.userId) throw refuse("actorId", "a link is signed by the caller");
  if (!(await orgLinkSignatureVerifies(link, fromBase64(c.caller.signingPublicKey))))
    throw refuse("sig", "the link is not signed with your registered signing key");
  if (link.op === "adopt") {
    if (c.caller.role !== "owner") throw refuse("actorId", "only an owner adopts the organization's log");
    const want = await Promise.all(((await c.members?.()) ?? []).map(asMember));
    const given = link.members!;
    const byId = new Map(given.map((m) => [m.userId, m]));
    if (given.length !== want.length || want.some((m) => !byId.has(m.userId) || !sameMember(byId.get(m.userId)!, m)))
      throw refuse("members", "the members are not the organization's, with their roles, emails and keys");
  } else if (link.op === "join") {
    if (!sameMember(link.subject!, await asMember(c.caller)))
      throw refuse("subject", "a join is your own entry: your id, email, role and keys");
    if (link.invite!.orgId !== c.orgId) throw refuse("invite.orgId", "the invite is for another organization");
  } else if (c.removing === undefined || link.subjectId !== c.removing) {
    throw refuse("subjectId", "a removal's link comes with the removal of that person (DELETE /orgs/:orgId/members/:userId)");
  }
  return { seq: link.seq, prev: link.prev, hash: await orgLinkHash(link), link };
}

/** The entry follows the stored head (read under the organization's lock), or another change came first. */
export function decideOrgLogStep(head: OrgLogHead, entry: Pick<OrgLogEntry, "seq" | "prev">, field: string): void {
  const seq = head ? head.seq + 1 : 0;
  const prev = head ? head.hash : "0".repeat(64);
  if (entry.seq !== seq || entry.prev !== prev) throw orgLogMoved(field, seq);
}
