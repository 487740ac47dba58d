/**
 * A vault's signed roster as this client follows it (the protocol itself is ../roster.ts): fetched
 * and replayed, never older than nor forked from a head this device saw; the links this client
 * signs; and where the server's member list or a wrap disagrees with the verified chain.
 */
import { fromBase64 } from "../../protocol/encoding";
import { ApiError, SecurityError } from "../errors";
import {
  applyLink,
  linkHash,
  memberDigest,
  parseLink,
  signLink,
  type RosterLink,
  type RosterState,
  type UnsignedLink,
} from "../../protocol/formats/roster";
import { RosterLinkError, sha256Hex } from "../../protocol/formats/links";
import { replayRoster } from "../../protocol/formats/roster-replay";
import { SerialQueue, type ClientCore } from "./core";
import { claimsIn, type Audit } from "./audit";
import type { Trust } from "./trust";
import type { MemberEntry, VerifiedRoster } from "./types";

/** How often a membership change is signed again after another change took its place in the roster. */
const MAX_ROSTER_ATTEMPTS = 5;

/** The server's refusal of a link because the chain moved on meanwhile (another change landed first). */
export function rosterRaced(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    err.status === 400 &&
    /^rosterLink\.(seq|prev|keyVersion|memberDigest|members|wraps|subjectKey)$/.test(err.field ?? "")
  );
}

export class Rosters {
  /** Seen heads are compared and moved one at a time: two verifications of one vault never move its head back. */
  private readonly heads = new SerialQueue();

  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly audit: Audit,
  ) {}

  /**
   * The vault's roster, fetched and verified: replayed from its first link, each signer's right
   * checked under the role rules, each signature checked with the signer's pinned keys, which
   * must also be the keys the chain recorded for them; and never older than, nor different from,
   * a head this client saw before (`ROSTER_ROLLBACK`). Null for a vault without a roster.
   */
  async verifiedRoster(vaultId: string): Promise<VerifiedRoster | null> {
    const { links } = await this.core.http.request<{ links: unknown }>("GET", `/vaults/${encodeURIComponent(vaultId)}/roster`);
    if (!Array.isArray(links)) throw new SecurityError("ROSTER_BROKEN", `the server's roster of vault ${vaultId} is not a list of links`);
    const state = await replayRoster(vaultId, links, (userId, recordedKey) => this.trust.signerKeysOf(userId, recordedKey));
    // Parsed once, after the replay checked every link's form.
    const parsed = links.map((l) => parseLink(l));
    // The audit heads the signers of links new to this device verified, judged against its own before
    // its head moves past them (outside the queue: a check of the audit log holds up no other vault).
    if (state && this.core.accountInfo) {
      const before = await this.core.rosterHeads.get(vaultId);
      const fresh = parsed.slice((before?.seq ?? -1) + 1);
      await this.audit.witness(
        this.core.account.orgId,
        claimsIn(fresh, (l) => `roster link ${l.seq} of vault ${vaultId}`),
      );
    }
    await this.heads.run(async () => {
      // The head seen is read here, inside the queue, so that a verification that finished first cannot be undone by this one.
      const seen = await this.core.rosterHeads.get(vaultId);
      if (seen) {
        if (!state || state.seq < seen.seq) {
          throw new SecurityError(
            "ROSTER_ROLLBACK",
            `the server shows the roster of vault ${vaultId} ${state ? `up to link ${state.seq}` : "as empty"}, but this client already saw link ${seen.seq}: a later change, such as a removal, would be undone`,
          );
        }
        if ((await linkHash(parsed[seen.seq]!)) !== seen.hash) {
          throw new SecurityError(
            "ROSTER_ROLLBACK",
            `the server shows the roster of vault ${vaultId} with another link ${seen.seq} than the one this client saw: a forked history`,
          );
        }
      }
      if (state && (!seen || state.seq > seen.seq)) await this.core.rosterHeads.set(vaultId, { seq: state.seq, hash: state.head });
    });
    if (!state) return null;
    await this.trust.pinRecorded(state.members);
    return { state, links: parsed };
  }

  /**
   * Signs a link after checking it as any replay would, on the state it follows (null for a
   * chain's first link): a link built from values the server slipped in (an id in another form,
   * a member set that does not add up) is refused here, unsigned.
   */
  async signRosterLink(link: UnsignedLink, before: RosterState | null): Promise<RosterLink> {
    const signed = await signLink({ ...link, ...(await this.audit.claimToSign()) }, this.core.requireKeys().signingPrivateKey);
    try {
      const parsed = parseLink(signed);
      const digest = parsed.op === "rekey" && before ? await memberDigest(before.members) : undefined;
      applyLink(before, parsed, await linkHash(parsed), digest);
    } catch (err) {
      if (!(err instanceof RosterLinkError)) throw err;
      // The caller's own role, by the verified roster, does not allow the change: the server's refusal, given here.
      if (err.field === "actorId") throw new ApiError(403, "FORBIDDEN", `not allowed in this vault: ${err.message}`);
      throw new SecurityError("INCONSISTENT", `not signing a roster link that would not follow (${err.field}): ${err.message}`);
    }
    return signed;
  }

  /** The caller's signed link after `state`. */
  nextRosterLink(state: RosterState, fields: Omit<UnsignedLink, "vaultId" | "seq" | "prev" | "actorId" | "at">): Promise<RosterLink> {
    return this.signRosterLink(
      {
        vaultId: state.vaultId,
        seq: state.seq + 1,
        prev: state.head,
        actorId: this.core.account.userId,
        at: new Date().toISOString(),
        ...fields,
      },
      state,
    );
  }

  /** Remembers the head a change of ours made. */
  async sawRosterLink(link: RosterLink | undefined): Promise<void> {
    if (!link) return;
    const hash = await linkHash(link);
    await this.heads.run(async () => {
      const seen = await this.core.rosterHeads.get(link.vaultId);
      if (!seen || link.seq > seen.seq) await this.core.rosterHeads.set(link.vaultId, { seq: link.seq, hash });
    });
  }

  /** Runs a signed change again, from a fresh roster, while another change takes its place in the chain first. */
  async withRosterRetry<T>(change: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await change();
      } catch (err) {
        if (!(rosterRaced(err) && attempt < MAX_ROSTER_ATTEMPTS)) throw err;
      }
    }
  }
}

/**
 * Where a wrap the server shows disagrees with the verified roster: the holder is not a member of
 * it, has another role, or the wrap is not the one the roster vouches for (by its SHA-256) or was
 * made by someone else.
 */
export async function wrapProblem(
  state: RosterState,
  userId: string,
  shown: Pick<MemberEntry, "encryptedVaultKey" | "senderId" | "role">,
): Promise<SecurityError | undefined> {
  const member = state.members.get(userId);
  const wrap = state.wraps.get(userId);
  if (!member || !wrap)
    return new SecurityError("MEMBER_LIST_MISMATCH", `${userId} is not a member according to the vault's signed roster`, userId);
  if (member.role !== shown.role)
    return new SecurityError(
      "MEMBER_LIST_MISMATCH",
      `the server shows ${userId} as ${shown.role}, the signed roster as ${member.role}`,
      userId,
    );
  let digest = "";
  try {
    digest = await sha256Hex(fromBase64(shown.encryptedVaultKey));
  } catch {
    // not base64: cannot be the vouched wrap
  }
  if (digest !== wrap.sha256) {
    return new SecurityError(
      "WRAP_MISMATCH",
      `the wrap the server shows for ${userId} is not the one the vault's signed roster vouches for (moved from another vault, or an old one)`,
      userId,
    );
  }
  if (wrap.senderId && wrap.senderId !== shown.senderId) {
    return new SecurityError(
      "WRAP_MISMATCH",
      `the wrap for ${userId} was made by ${wrap.senderId} according to the signed roster, not by ${shown.senderId}`,
      userId,
    );
  }
  return undefined;
}

/** Every way the server's member list disagrees with the verified roster: extra or missing users, roles, wraps. */
export async function memberListProblems(state: RosterState, members: readonly MemberEntry[]): Promise<SecurityError[]> {
  const problems: SecurityError[] = [];
  const listed = new Set(members.map((m) => m.userId));
  if (listed.size !== members.length)
    problems.push(new SecurityError("MEMBER_LIST_MISMATCH", "the server's member list names a user more than once"));
  for (const userId of state.members.keys()) {
    if (!listed.has(userId))
      problems.push(
        new SecurityError(
          "MEMBER_LIST_MISMATCH",
          `the server's member list leaves out ${userId}, a member according to the signed roster`,
          userId,
        ),
      );
  }
  for (const m of members) {
    const problem = await wrapProblem(state, m.userId, m);
    if (problem) problems.push(problem);
  }
  return problems;
}
