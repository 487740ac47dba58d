/**
 * A roster link's form (`parseLink`): exactly the fields its operation carries, each of its type
 * and form, as a client replaying a chain and the server taking a new link both read it. The
 * rules a link follows from the state before it are `applyLink` (roster.ts).
 */
import { MAX_NAME, nameProblem } from "../names";
import { VAULT_ROLES, VAULT_TYPES, type VaultRole, type VaultType } from "../vault-roles";
import {
  checkAtAndSig,
  ED25519_SIG,
  exactKeys,
  fail,
  HEX64,
  int,
  oneOf,
  parseAuditClaim,
  AUDIT_CLAIM_FIELDS,
  str,
  TIMESTAMP,
  UUID_LOWER,
} from "./links";

export const ROSTER_OPS = ["create", "adopt", "add", "role", "remove", "rekey", "rename", "rewrap", "rotate"] as const;
export type RosterOp = (typeof ROSTER_OPS)[number];

/**
 * A wrap the link vouches for: its recipient and the SHA-256 (hex) of the wrapped key bytes. A
 * personal vault's wrap (under the owner's stretched key) also names the account state it was
 * made under, both or neither (`WrapLabel`); links made before wraps were labelled have neither.
 */
export interface RosterWrap extends Partial<WrapLabel> {
  userId: string;
  sha256: string;
}

/** The account state a personal wrap was made under. */
export interface WrapLabel {
  /** The version of the signed KDF statement whose parameters derived the stretched key the wrap is under. */
  kdfVersion: number;
  /** The version of the account's key log whose signing key signed the link. */
  keyLogVersion: number;
}

/** A member as an `adopt` link lists them: role and key fingerprint (`keyFingerprint`). */
export interface RosterMember {
  userId: string;
  role: VaultRole;
  key: string;
}

/** A link before it is signed. Fields an operation does not use are absent, never null. */
export interface UnsignedLink {
  vaultId: string;
  seq: number;
  /** SHA-256 (hex) of the previous link's canonical bytes; `GENESIS_PREV` at seq 0. */
  prev: string;
  op: RosterOp;
  actorId: string;
  /** When the actor signed it (ISO 8601 UTC with milliseconds): the signer's claim, not checked against a clock. */
  at: string;
  /** The vault's key version after the change. */
  keyVersion: number;
  /** create, adopt */
  vaultType?: VaultType;
  /** create, rewrap and rotate (the actor), add, role, remove */
  subjectId?: string;
  /** create (owner), add, role (the new role) */
  role?: VaultRole;
  /** rename, and optionally create and adopt: the vault's name from this link on (links made before names were bound have none). */
  name?: string;
  /** create, add, role, remove, rewrap: the subject's key fingerprint (`keyFingerprint`); rotate: the actor's new one. */
  subjectKey?: string;
  /** adopt: every member, sorted by userId. */
  members?: RosterMember[];
  /** rekey: `memberDigest` of the member set the new key is wrapped for. */
  memberDigest?: string;
  /** The wraps the change adds, sorted by userId: one for create, add, rewrap and rotate, one per member for rekey and adopt, none otherwise. */
  wraps: RosterWrap[];
  /** Optional, any op: the head of the organization's audit log the signer last verified (`AuditClaim`). */
  auditSeq?: number;
  auditHead?: string;
}

export interface RosterLink extends UnsignedLink {
  /** Ed25519 by the actor over `LINK_SIGNING_CONTEXT` + the canonical bytes, base64. */
  sig: string;
}

/** Most members (and so wraps) one link may name: far above any team, bounding the work a link costs. */
export const MAX_LINK_MEMBERS = 10_000;

// ---- Format ------------------------------------------------------------------------------------

const COMMON_FIELDS = ["vaultId", "seq", "prev", "op", "actorId", "at", "keyVersion", "wraps", "sig"];
/** The fields each operation carries beside the common ones; every other field is refused. */
const OP_FIELDS: Record<RosterOp, readonly string[]> = {
  create: ["vaultType", "subjectId", "role", "subjectKey"],
  adopt: ["vaultType", "members"],
  add: ["subjectId", "role", "subjectKey"],
  role: ["subjectId", "role", "subjectKey"],
  remove: ["subjectId", "subjectKey"],
  rekey: ["memberDigest"],
  rename: ["name"],
  rewrap: ["subjectId", "subjectKey"],
  rotate: ["subjectId", "subjectKey"],
};
/** Fields an operation may carry or leave out: the name, which links made before names were bound lack. */
const OPTIONAL_OP_FIELDS: Partial<Record<RosterOp, readonly string[]>> = { create: ["name"], adopt: ["name"] };

/** One of a link's wraps: recipient and hash, and the label of a personal wrap (both fields or neither). */
function parseWrap(e: Record<string, unknown>): RosterWrap {
  exactKeys(e, ["userId", "sha256", "kdfVersion", "keyLogVersion"], "wraps");
  const wrap: RosterWrap = {
    userId: str(e, "userId", UUID_LOWER, "a lower-case UUID"),
    sha256: str(e, "sha256", HEX64, "64 lower-case hex digits"),
  };
  if (e.kdfVersion === undefined && e.keyLogVersion === undefined) return wrap;
  if (e.kdfVersion === undefined || e.keyLogVersion === undefined)
    fail("wraps", "a wrap names both kdfVersion and keyLogVersion, or neither");
  return { ...wrap, kdfVersion: int(e, "kdfVersion", 1), keyLogVersion: int(e, "keyLogVersion", 1) };
}

function sortedEntries<T extends { userId: string }>(
  o: Record<string, unknown>,
  field: string,
  parse: (e: Record<string, unknown>) => T,
): T[] {
  const v = o[field];
  if (!Array.isArray(v) || v.length > MAX_LINK_MEMBERS) fail(field, `${field} must be an array of at most ${MAX_LINK_MEMBERS} entries`);
  const out = v.map((e) => {
    if (e === null || typeof e !== "object" || Array.isArray(e)) fail(field, `${field} entries must be objects`);
    return parse(e as Record<string, unknown>);
  });
  for (let i = 1; i < out.length; i++) {
    if (!(out[i - 1]!.userId < out[i]!.userId)) fail(field, `${field} must be sorted by userId, each user once`);
  }
  return out;
}

/**
 * A link as received (JSON), checked field by field: exactly the fields its operation carries,
 * each of its type and form. Throws `RosterLinkError` naming the field.
 */
export function parseLink(raw: unknown): RosterLink {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) fail("rosterLink", "a roster link must be an object");
  const o = raw as Record<string, unknown>;
  const op = oneOf<RosterOp>(o, "op", ROSTER_OPS);
  const required = [...COMMON_FIELDS, ...OP_FIELDS[op]];
  exactKeys(o, [...required, ...(OPTIONAL_OP_FIELDS[op] ?? []), ...AUDIT_CLAIM_FIELDS], "");
  for (const f of required) if (o[f] === undefined) fail(f, `a ${op} link needs ${f}`);

  const link: RosterLink = {
    vaultId: str(o, "vaultId", UUID_LOWER, "a lower-case UUID"),
    seq: int(o, "seq", 0),
    prev: str(o, "prev", HEX64, "64 lower-case hex digits"),
    op,
    actorId: str(o, "actorId", UUID_LOWER, "a lower-case UUID"),
    at: str(o, "at", TIMESTAMP, "an ISO 8601 UTC timestamp with milliseconds"),
    keyVersion: int(o, "keyVersion", 1),
    wraps: sortedEntries(o, "wraps", parseWrap),
    sig: str(o, "sig", ED25519_SIG, "a base64 Ed25519 signature (64 bytes)"),
  };
  checkAtAndSig(link);
  parseAuditClaim(o, link);
  if (o.vaultType !== undefined) link.vaultType = oneOf<VaultType>(o, "vaultType", VAULT_TYPES);
  if (o.subjectId !== undefined) link.subjectId = str(o, "subjectId", UUID_LOWER, "a lower-case UUID");
  if (o.role !== undefined) link.role = oneOf<VaultRole>(o, "role", VAULT_ROLES);
  if (o.subjectKey !== undefined) link.subjectKey = str(o, "subjectKey", HEX64, "64 lower-case hex digits");
  if (o.memberDigest !== undefined) link.memberDigest = str(o, "memberDigest", HEX64, "64 lower-case hex digits");
  if (o.name !== undefined) {
    if (nameProblem(o.name) !== undefined || typeof o.name !== "string")
      fail("name", `name must be 1 to ${MAX_NAME} characters, not blank`);
    link.name = o.name;
  }
  if (o.members !== undefined) {
    link.members = sortedEntries(o, "members", (e) => {
      exactKeys(e, ["userId", "role", "key"], "members");
      return {
        userId: str(e, "userId", UUID_LOWER, "a lower-case UUID"),
        role: oneOf<VaultRole>(e, "role", VAULT_ROLES),
        key: str(e, "key", HEX64, "64 lower-case hex digits"),
      };
    });
  }
  return link;
}
