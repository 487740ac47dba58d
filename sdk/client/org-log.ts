/**
 * The organization's signed log as this client follows it (the protocol: protocol/formats/org-log.ts):
 * fetched and replayed, each signer's keys checked as a roster's are, and never older than nor
 * forked from a head this device saw (`ORG_LOG_ROLLBACK`; the head is kept with the vaults' roster
 * heads, under `org:<orgId>`). Organization roles come from it, never from the server's member
 * list: a person the log does not name is shown as unsigned, with no role a client acts on.
 *
 * An organization made before the log gets one from its owner's next session (`settle`: the owner's
 * client adopts the members as the server lists them then, the one moment it takes the server's
 * word); a member who joined by a signed invite adds their own `join` at registration.
 */
import { keyFingerprint } from "../../protocol/crypto/keys";
import { RosterLinkError } from "../../protocol/formats/links";
import {
  applyOrgLink,
  ORG_GENESIS_PREV,
  orgLinkHash,
  parseOrgLink,
  replayOrgLog,
  signOrgLink,
  type OrgLink,
  type OrgLogMember,
  type OrgLogState,
  type OrgSignerKeys,
  type OrgSigners,
  type SignedInvite,
  type UnsignedOrgLink,
} from "../../protocol/formats/org-log";
import { ApiError, SecurityError } from "../errors";
import { SerialQueue, type ClientCore } from "./core";
import type { Trust } from "./trust";
import { selfConsistent } from "./trust/bundle";
import type { CheckedMember, OrgMember, ServedBundle } from "./types";

/** Where a device keeps the organization's head, beside the vaults' roster heads. */
const headKey = (orgId: string) => `org:${orgId}`;

/** A member as the signed log vouches for them, or not. */
export type SignedMember = CheckedMember & {
  /**
   * `signed`: the log names them (their role is the log's); `removed`: the log took them out;
   * `unsigned`: it names them neither way (no role to act on); absent while the organization has no log.
   */
  orgLog?: "signed" | "unsigned" | "removed";
  /** Who signed their entry: the adopting owner, or the inviter whose invite they joined by. */
  signedBy?: string;
};

export class OrgLogs {
  private readonly heads = new SerialQueue();
  /** The last state this client replayed to (links are replayed once per client, then only what follows). */
  private replayed: OrgLogState | null = null;

  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
  ) {}

  private get orgId(): string {
    return this.core.account.orgId;
  }

  /** The log, replayed and checked against this device's head; null while the organization has none. */
  async verified(): Promise<OrgLogState | null> {
    const { links } = await this.core.http.request<{ links: unknown }>("GET", `/orgs/${encodeURIComponent(this.orgId)}/log`);
    if (!Array.isArray(links)) throw new SecurityError("ORG_LOG_BROKEN", "the server's organization log is not a list of links");
    // Links this client replayed before are not replayed again: the one at the remembered state's seq must still hash to its head.
    const cached = this.replayed?.orgId === this.orgId ? this.replayed : null;
    const from = cached && links.length > cached.seq && (await this.hashAt(links, cached.seq)) === cached.head ? cached : null;
    const state = await replayOrgLog(this.orgId, links, this.signers, from);
    await this.heads.run(async () => {
      const seen = await this.core.rosterHeads.get(headKey(this.orgId));
      if (seen) {
        if (!state || state.seq < seen.seq)
          throw new SecurityError(
            "ORG_LOG_ROLLBACK",
            `the server shows the organization's log ${state ? `up to link ${state.seq}` : "as empty"}, but this device already saw link ${seen.seq}: a later change, such as a removal, would be undone`,
          );
        if ((await this.hashAt(links, seen.seq)) !== seen.hash)
          throw new SecurityError(
            "ORG_LOG_ROLLBACK",
            `the server shows the organization's log with another link ${seen.seq} than this device saw: a forked history`,
          );
      }
      if (state && (!seen || state.seq > seen.seq))
        await this.core.rosterHeads.set(headKey(this.orgId), { seq: state.seq, hash: state.head });
    });
    if (state) this.replayed = state;
    return state;
  }

  private async hashAt(links: readonly unknown[], seq: number): Promise<string | undefined> {
    try {
      return await orgLinkHash(parseOrgLink(links[seq]));
    } catch {
      return undefined;
    }
  }

  /**
   * Signers' keys: the keys the log recorded for them, which are their current keys (self-signed)
   * or a step of their verified key log that leads to those; then the steps after. Replaying the
   * log pins nothing: trust in a person's keys is the pins' (trust/), taken where keys are used.
   */
  private readonly signers: OrgSigners = {
    recorded: async (userId, recorded) => {
      const current = await this.currentKeys(userId);
      if (current.fingerprint === recorded) return current.bundle;
      const log = await this.trust.verifiedKeyLog(userId);
      const at = log.findIndex((e) => e.keys === recorded);
      if (at < 0 || log[log.length - 1]!.keys !== current.fingerprint)
        throw new SecurityError(
          "KEY_CHANGED",
          `the keys the server shows for ${userId} are not the ones the organization's log recorded for them, and no signed step of their key log leads from those to these`,
          userId,
        );
      return { publicKey: log[at]!.entry.publicKey, signingPublicKey: log[at]!.entry.signingPublicKey };
    },
    later: async (userId, recorded) => {
      const log = await this.trust.verifiedKeyLog(userId);
      const at = log.findIndex((e) => e.keys === recorded);
      return at < 0 ? [] : log.slice(at + 1).map((e) => ({ publicKey: e.entry.publicKey, signingPublicKey: e.entry.signingPublicKey }));
    },
  };

  /** A user's current keys as the server shows them, self-signed (one's own: as this session holds them). */
  private async currentKeys(userId: string): Promise<{ bundle: OrgSignerKeys; fingerprint: string }> {
    if (userId === this.core.account.userId) {
      const { publicKey, signingPublicKey } = this.core.account;
      return { bundle: { publicKey, signingPublicKey }, fingerprint: await keyFingerprint({ publicKey, signingPublicKey }) };
    }
    const served = await this.core.http.request<ServedBundle>("GET", `/users/${encodeURIComponent(userId)}/keys`);
    return { bundle: served, fingerprint: (await selfConsistent(served, userId)).keys };
  }

  /**
   * At the start of a session: an owner adopts a log for an organization that has none (the
   * members as the server lists them now, each bundle self-consistent); a member who joined by a
   * signed invite the log can vouch for adds their entry. A race with another device is left to it.
   */
  async settle(invite?: SignedInvite): Promise<OrgLogState | null> {
    const state = await this.verified();
    const me = this.core.account;
    try {
      if (!state && me.role === "owner") return await this.adopt();
      if (state && invite && !state.members.has(me.userId) && !state.removed.has(me.userId)) return await this.join(state, invite);
    } catch (err) {
      // Another device (or owner) wrote first: what it wrote is what the log is now.
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    }
    return state;
  }

  private async adopt(): Promise<OrgLogState | null> {
    const { members } = await this.core.http.request<{ members: OrgMember[] }>("GET", `/orgs/${encodeURIComponent(this.orgId)}/members`);
    const current: OrgLogMember[] = [];
    for (const m of members.filter((x) => x.removedAt === undefined)) {
      await selfConsistent(m, m.userId);
      current.push({ userId: m.userId, email: m.email, role: m.role, key: await keyFingerprint(m) });
    }
    return this.append({ op: "adopt", members: current.sort((a, b) => (a.userId < b.userId ? -1 : 1)) }, null);
  }

  private async join(state: OrgLogState, invite: SignedInvite): Promise<OrgLogState | null> {
    const me = this.core.account;
    const subject = { userId: me.userId, email: me.email, role: me.role, key: await keyFingerprint(me) };
    return this.append({ op: "join", subject, invite }, state);
  }

  /** Signs `fields` as the next link after `state`, checked as any replay would before it is sent. */
  async signNext(
    fields: Pick<UnsignedOrgLink, "op" | "members" | "subject" | "invite" | "subjectId">,
    state: OrgLogState | null,
  ): Promise<OrgLink> {
    const link = await signOrgLink(
      {
        orgId: this.orgId,
        seq: state ? state.seq + 1 : 0,
        prev: state?.head ?? ORG_GENESIS_PREV,
        actorId: this.core.account.userId,
        at: new Date().toISOString(),
        ...fields,
      },
      this.core.requireKeys().signingPrivateKey,
    );
    try {
      applyOrgLink(state, parseOrgLink(link), await orgLinkHash(link));
    } catch (err) {
      if (!(err instanceof RosterLinkError)) throw err;
      // The caller's own role, or the organization's rules (its last owner stays), as the signed log gives them: the server's refusal, given here.
      if (err.field === "actorId") throw new ApiError(403, "FORBIDDEN", `not allowed by the organization's signed log: ${err.message}`);
      if (err.field === "subjectId") throw new ApiError(400, "INVALID", `refused by the organization's signed log: ${err.message}`);
      throw new SecurityError("INCONSISTENT", `not signing an organization log link that would not follow (${err.field}): ${err.message}`);
    }
    return link;
  }

  private async append(fields: Parameters<OrgLogs["signNext"]>[0], state: OrgLogState | null): Promise<OrgLogState | null> {
    const link = await this.signNext(fields, state);
    await this.core.http.request("POST", `/orgs/${encodeURIComponent(this.orgId)}/log`, { body: { link } });
    return this.verified();
  }

  /**
   * The organization's people with their roles as the signed log gives them: a person the log does
   * not name keeps the server's listing but is marked `unsigned` with role `member` (nothing a client
   * acts on as an admin's); while the organization has no log, the server's roles as they are.
   */
  async members(): Promise<SignedMember[]> {
    const [state, listed] = await Promise.all([this.verified(), this.trust.orgMembers()]);
    if (!state) return listed;
    return listed.map((m): SignedMember => {
      const signed = state.members.get(m.userId);
      if (state.removed.has(m.userId)) return { ...m, role: "member", orgLog: "removed", signedBy: state.removed.get(m.userId)!.signedBy };
      if (!signed) return { ...m, role: "member", orgLog: "unsigned" };
      return { ...m, role: signed.role, orgLog: "signed", signedBy: signed.signedBy };
    });
  }
}
