/**
 * The signed organization log: who is in the organization, with which role, and who vouched for
 * it, as a hash-chained list of links each signed by the person who made the change. Clients take
 * organization roles from it, never from the server's member list, and follow it as they follow a
 * vault's roster: replayed from its first link, never older than nor forked from a head a device saw.
 *
 * - `adopt` (seq 0 only): an owner signs the organization's members as they are when the log starts.
 * - `join`: a new member signs their own entry, carrying the invite an owner or admin signed for
 *   their address and role (protocol/formats/statements.ts); an invite joins one person once.
 * - `remove`: an owner or admin takes someone out (an admin not an owner), or a member leaves; the
 *   last owner stays.
 *
 * Design: docs/design/org-log.md. Pure: WebCrypto only.
 */
import { canonicalJson } from "../canonical";
import { fromBase64, toBase64, utf8, type Bytes } from "../encoding";
import type { CryptoKey } from "../crypto/primitives";
import { keyFingerprint } from "../crypto/keys";
import { normalizeEmail } from "../email";
import { SecurityError } from "../errors";
import { managesOrg, mayRemoveFromOrg, ORG_ROLES, type OrgRole } from "../org-roles";
import { inviteStatementBytes, statementVerifies, type InviteStatement } from "./statements";
import {
  checkAtAndSig,
  exactKeys,
  fail,
  HEX64,
  int,
  linkSig,
  linkSigVerifies,
  oneOf,
  RosterLinkError,
  sha256Hex,
  str,
  TIMESTAMP,
  UUID_LOWER,
} from "./links";

/** Prepended to a link's canonical bytes before signing: an org-log signature is never valid as anything else. */
export const ORG_LINK_SIGNING_CONTEXT = "vault-org-log-link/v1\n";
export const ORG_GENESIS_PREV = "0".repeat(64);
/** The most members one `adopt` link names (an organization larger than this adopts no log). */
export const MAX_ADOPT_MEMBERS = 5000;
export const ORG_LOG_OPS = ["adopt", "join", "remove"] as const;
export type OrgLogOp = (typeof ORG_LOG_OPS)[number];

/** A member as the log records them: `key` is their key fingerprint (`keyFingerprint`, hex). */
export interface OrgLogMember {
  userId: string;
  email: string;
  role: OrgRole;
  key: string;
}

/** The invite a `join` carries: the statement its inviter signed, and that signature. */
export interface SignedInvite extends InviteStatement {
  signature: string;
}

export interface UnsignedOrgLink {
  orgId: string;
  seq: number;
  prev: string;
  actorId: string;
  at: string;
  op: OrgLogOp;
  /** adopt: every member. */
  members?: OrgLogMember[];
  /** join: the joiner (the actor); remove: only `userId` is read. */
  subject?: OrgLogMember;
  /** join: the invite. */
  invite?: SignedInvite;
  /** remove: who leaves. */
  subjectId?: string;
}
export interface OrgLink extends UnsignedOrgLink {
  sig: string;
}

/** The log replayed to its head. */
export interface OrgLogState {
  orgId: string;
  seq: number;
  head: string;
  members: Map<string, OrgLogMember & { signedBy: string }>;
  /** Who the log took out, with who signed it. */
  removed: Map<string, { signedBy: string; seq: number }>;
  /** Invites that joined someone already. */
  invitesUsed: Set<string>;
}

// ---- Encoding ----------------------------------------------------------------------------------

const body = (link: UnsignedOrgLink): string => {
  const { sig: _sig, ...rest } = link as OrgLink;
  return canonicalJson(rest);
};
export const orgLinkBytes = (link: UnsignedOrgLink): Bytes => utf8(body(link));
export const orgLinkSigningBytes = (link: UnsignedOrgLink): Bytes => utf8(ORG_LINK_SIGNING_CONTEXT + body(link));
export const orgLinkHash = (link: UnsignedOrgLink): Promise<string> => sha256Hex(orgLinkBytes(link));

export async function signOrgLink(link: UnsignedOrgLink, signingPrivateKey: CryptoKey): Promise<OrgLink> {
  return { ...link, sig: await linkSig(orgLinkSigningBytes(link), signingPrivateKey) };
}

export const orgLinkSignatureVerifies = (link: OrgLink, signingPublicKeyRaw: Bytes): Promise<boolean> =>
  linkSigVerifies(orgLinkSigningBytes(link), link.sig, signingPublicKeyRaw);

// ---- Form --------------------------------------------------------------------------------------

const obj = (v: unknown, field: string): Record<string, unknown> => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(field, `${field} must be an object`);
  return v as Record<string, unknown>;
};

function parseMember(raw: unknown, field: string): OrgLogMember {
  const o = obj(raw, field);
  exactKeys(o, ["userId", "email", "role", "key"], field);
  const email = typeof o.email === "string" ? o.email : "";
  if (email.length === 0 || email.length > 254 || normalizeEmail(email) !== email)
    fail(`${field}.email`, "email must be a normalized address");
  return {
    userId: str(o, "userId", UUID_LOWER, "a lower-case UUID"),
    email,
    role: oneOf<OrgRole>(o, "role", ORG_ROLES),
    key: str(o, "key", HEX64, "a key fingerprint (64 hex digits)"),
  };
}

function parseInvite(raw: unknown): SignedInvite {
  const o = obj(raw, "invite");
  exactKeys(o, ["inviteId", "orgId", "orgName", "email", "role", "expiresAt", "inviterId", "signature"], "invite");
  const text = (k: string, max: number) => {
    if (typeof o[k] !== "string" || (o[k] as string).length === 0 || (o[k] as string).length > max)
      fail(`invite.${k}`, `invite.${k} must be text`);
    return o[k] as string;
  };
  return {
    inviteId: str(o, "inviteId", UUID_LOWER, "a lower-case UUID"),
    orgId: str(o, "orgId", UUID_LOWER, "a lower-case UUID"),
    orgName: text("orgName", 512),
    email: text("email", 254),
    role: oneOf<"admin" | "member">(o, "role", ["admin", "member"]),
    expiresAt: str(o, "expiresAt", TIMESTAMP, "a timestamp"),
    inviterId: str(o, "inviterId", UUID_LOWER, "a lower-case UUID"),
    signature: text("signature", 100),
  };
}

/** A link as received, in its one form (unknown fields, a field of another op, refused). */
export function parseOrgLink(raw: unknown): OrgLink {
  const o = obj(raw, "link");
  const op = oneOf<OrgLogOp>(o, "op", ORG_LOG_OPS);
  const own = { adopt: ["members"], join: ["subject", "invite"], remove: ["subjectId"] }[op];
  exactKeys(o, ["orgId", "seq", "prev", "actorId", "at", "op", "sig", ...own], "");
  const link: OrgLink = {
    orgId: str(o, "orgId", UUID_LOWER, "a lower-case UUID"),
    seq: int(o, "seq", 0),
    prev: str(o, "prev", HEX64, "64 lower-case hex digits"),
    actorId: str(o, "actorId", UUID_LOWER, "a lower-case UUID"),
    at: str(o, "at", TIMESTAMP, "a timestamp"),
    op,
    sig: typeof o.sig === "string" ? o.sig : "",
  };
  checkAtAndSig(link);
  if (op === "adopt") {
    if (!Array.isArray(o.members) || o.members.length === 0 || o.members.length > MAX_ADOPT_MEMBERS)
      fail("members", `members must list 1 to ${MAX_ADOPT_MEMBERS} members`);
    link.members = o.members.map((m, i) => parseMember(m, `members.${i}`));
  } else if (op === "join") {
    link.subject = parseMember(o.subject, "subject");
    link.invite = parseInvite(o.invite);
  } else link.subjectId = str(o, "subjectId", UUID_LOWER, "a lower-case UUID");
  return link;
}

// ---- Rules -------------------------------------------------------------------------------------

const ownersIn = (members: OrgLogState["members"]) => [...members.values()].filter((m) => m.role === "owner").length;

/**
 * The state after `link`, or a `RosterLinkError` naming the field at fault. The join's invite
 * signature is checked by the replay (it needs the inviter's keys); everything else is here.
 */
export function applyOrgLink(state: OrgLogState | null, link: OrgLink, hash: string): OrgLogState {
  if (link.seq !== (state ? state.seq + 1 : 0)) fail("seq", `seq must be ${state ? state.seq + 1 : 0}`);
  if (link.prev !== (state?.head ?? ORG_GENESIS_PREV)) fail("prev", "prev is not the hash of the link before");
  if (state && link.orgId !== state.orgId) fail("orgId", "the link names another organization");
  const next: OrgLogState = state
    ? {
        ...state,
        seq: link.seq,
        head: hash,
        members: new Map(state.members),
        removed: new Map(state.removed),
        invitesUsed: new Set(state.invitesUsed),
      }
    : { orgId: link.orgId, seq: 0, head: hash, members: new Map(), removed: new Map(), invitesUsed: new Set() };
  if (link.op === "adopt") {
    if (state) fail("op", "only a log's first link adopts");
    for (const m of link.members!) {
      if (next.members.has(m.userId)) fail("members", `member ${m.userId} is named twice`);
      if ([...next.members.values()].some((n) => n.email === m.email)) fail("members", `email ${m.email} is named twice`);
      next.members.set(m.userId, { ...m, signedBy: link.actorId });
    }
    if (next.members.get(link.actorId)?.role !== "owner") fail("actorId", "the adopting actor must be an owner it names");
    return next;
  }
  if (!state) fail("op", "a log starts with adopt");
  if (link.op === "join") {
    const { subject, invite } = link as Required<OrgLink>;
    if (subject.userId !== link.actorId) fail("subject", "a member joins by signing their own entry");
    if (next.members.has(subject.userId) || next.removed.has(subject.userId)) fail("subject", "this user was in the organization before");
    if ([...next.members.values()].some((m) => m.email === subject.email)) fail("subject.email", "a member has this email already");
    if (invite.orgId !== link.orgId) fail("invite.orgId", "the invite is for another organization");
    if (normalizeEmail(invite.email) !== subject.email || invite.role !== subject.role)
      fail("invite", "the invite names another address or role than the entry");
    if (next.invitesUsed.has(invite.inviteId)) fail("invite.inviteId", "this invite joined someone already");
    const inviter = next.members.get(invite.inviterId);
    if (!inviter || !managesOrg(inviter.role)) fail("invite.inviterId", "the inviter is not an owner or admin in the log");
    next.invitesUsed.add(invite.inviteId);
    next.members.set(subject.userId, { ...subject, signedBy: invite.inviterId });
    return next;
  }
  const subjectId = link.subjectId!;
  const actor = next.members.get(link.actorId);
  const target = next.members.get(subjectId);
  if (!actor) fail("actorId", "the actor is not a member in the log");
  if (!target) fail("subjectId", "the person is not a member in the log");
  if (!mayRemoveFromOrg(actor.role, target.role, subjectId === link.actorId))
    fail("actorId", `a ${actor.role} may not remove a ${target.role}`);
  next.members.delete(subjectId);
  if (ownersIn(next.members) === 0) fail("subjectId", "the last owner stays");
  next.removed.set(subjectId, { signedBy: link.actorId, seq: link.seq });
  return next;
}

/** Public keys as the server hands them out, checked by the caller (self-signature, pins, key log). */
export interface OrgSignerKeys {
  publicKey: string;
  signingPublicKey: string;
}

/** Where a replay finds signers' keys (the caller checks what it hands back). */
export interface OrgSigners {
  /** The keys the log recorded for `userId` (their fingerprint is `recordedKey`). */
  recorded(userId: string, recordedKey: string): Promise<OrgSignerKeys>;
  /** The keys `userId` rotated to since those, in order, as their verified key log leads (asked only when the recorded keys do not verify). */
  later(userId: string, recordedKey: string): Promise<OrgSignerKeys[]>;
}

/**
 * Replays a log: each link's form and place, its actor's right, its signature by the key the log
 * recorded for its actor (or one their key log leads to), and a join's invite by its inviter's.
 * `ORG_LOG_BROKEN`, `KEY_CHANGED` or `BAD_SIGNATURE` naming the link. From `from` (a state this
 * replay or an earlier one reached over the same first links), only the links after it; an empty
 * log is null.
 */
export async function replayOrgLog(
  orgId: string,
  rawLinks: readonly unknown[],
  signers: OrgSigners,
  from: OrgLogState | null = null,
): Promise<OrgLogState | null> {
  let state = from;
  for (let index = from ? from.seq + 1 : 0; index < rawLinks.length; index++) {
    const where = `organization log link ${index}`;
    let link: OrgLink, next: OrgLogState;
    try {
      link = parseOrgLink(rawLinks[index]);
      if (link.orgId !== orgId) fail("orgId", `it names organization ${link.orgId}`);
      next = applyOrgLink(state, link, await orgLinkHash(link));
    } catch (err) {
      if (err instanceof RosterLinkError) throw new SecurityError("ORG_LOG_BROKEN", `${where} is invalid (${err.field}): ${err.message}`);
      throw err;
    }
    const recorded = (state?.members.get(link.actorId) ?? next.members.get(link.actorId))!.key;
    await verifiedSigner(where, link.actorId, recorded, signers, (raw) => orgLinkSignatureVerifies(link, raw));
    if (link.op === "join") {
      const { signature, ...statement } = link.invite!;
      const bytes = inviteStatementBytes(statement);
      const inviterKey = state!.members.get(statement.inviterId)!.key;
      await verifiedSigner(`${where}: the invite`, statement.inviterId, inviterKey, signers, (raw) =>
        statementVerifies(bytes, toBase64(raw), signature),
      );
    }
    state = next;
  }
  return state;
}

async function verifiedSigner(
  where: string,
  userId: string,
  recorded: string,
  signers: OrgSigners,
  verifies: (signingPublicKeyRaw: Bytes) => Promise<boolean>,
): Promise<void> {
  const keys = await signers.recorded(userId, recorded);
  if ((await keyFingerprint(keys)) !== recorded)
    throw new SecurityError("KEY_CHANGED", `${where}: the signer's keys are not the ones the log recorded for them`, userId);
  if (await verifies(fromBase64(keys.signingPublicKey))) return;
  for (const k of await signers.later(userId, recorded)) if (await verifies(fromBase64(k.signingPublicKey))) return;
  throw new SecurityError("BAD_SIGNATURE", `${where} is not signed by ${userId}`, userId);
}
