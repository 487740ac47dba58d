/**
 * Invites, made so that the first contact between inviter and invitee is authenticated without
 * the server's word. Why and how: docs/design/invites.md.
 */
import { normalizeEmail } from "../../protocol/email";
import { toBase64 } from "../../protocol/encoding";
import { ApiError, SecurityError } from "../errors";
import { isCanonicalId } from "../../protocol/ids";
import { groupedFingerprint, keyFingerprint } from "../../protocol/crypto/keys";
import { randomBytes } from "../../protocol/crypto/primitives";
import {
  formatInviteCode,
  INVITE_SECRET_BYTES,
  inviteStatementBytes,
  parseInviteCode,
  signStatement,
  statementVerifies,
  type SignedStatement,
} from "../../protocol/formats/statements";
import type { ClientCore } from "./core";
import { selfConsistent } from "./trust/bundle";
import type { Trust } from "./trust";
import type { Invite, ServedBundle } from "./types";
import type { GrantableRole } from "../../protocol/vault-roles";

/** What `POST /invites/redeem` answers. */
interface Redeemable {
  inviteId: string;
  orgId: string;
  orgName?: string;
  email: string;
  role: GrantableRole;
  expiresAt: string;
  inviter: ServedBundle;
  inviteStatement?: SignedStatement;
}

/** An invite as the invitee's client checked it: `verified` when its link named the inviter's key and the inviter's signature holds. */
export interface CheckedInvite extends Redeemable {
  token: string;
  /** The inviter's key fingerprint, grouped (`groupedFingerprint`). */
  inviterFingerprint: string;
  /** The link's binding secret (never sent as such: the registration carries a MAC made with it). */
  secret?: Uint8Array<ArrayBuffer>;
  verified: boolean;
}

/** A new invite: `link` (or `code`) is what to send the invitee, privately; `token` alone works too, without the checks. */
export interface CreatedInvite {
  inviteId: string;
  token: string;
  expiresAt: string;
  /** The organization's name as the inviter signed it into the invite (the invitee is shown it). */
  orgName: string;
  code: string;
  link: string;
}

/** The longest an invite lives (contract section 6), and how far this client's clock may be from the server's. */
const MAX_INVITE_LIFETIME_MS = 30 * 86_400_000;
const CLOCK_SLACK_MS = 5 * 60_000;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** `expiresIn` as the contract writes it (`<n><s|m|h|d>`); anything else counts as the longest. */
const durationMs = (text: string) => {
  const m = /^(\d{1,9})([smhd])$/.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : MAX_INVITE_LIFETIME_MS;
};

export class Invites {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
  ) {}

  /**
   * Creates the invite, signs it, and keeps the link's binding secret on this device (by the
   * invited email) to check the invitee's keys against at first contact. An invite the server
   * would not take the statement for is revoked again.
   */
  async createInvite(email: string, role: GrantableRole = "member", expiresIn?: string): Promise<CreatedInvite> {
    const { core } = this;
    const keys = core.requireKeys();
    const account = core.account;
    const address = normalizeEmail(email);
    const asked = Date.now();
    const created = await core.http.request<{ inviteId: string; token: string; expiresAt: string }>("POST", "/invites", {
      body: { email: address, role, expiresIn },
    });
    let orgName: string;
    try {
      // The expiry this client signs is the server's: no later than what was asked (30 days at most, the server's default otherwise).
      const latest = asked + (expiresIn ? durationMs(expiresIn) : MAX_INVITE_LIFETIME_MS) + CLOCK_SLACK_MS;
      if (!isCanonicalId(created.inviteId) || !(Date.parse(created.expiresAt) <= latest))
        throw new SecurityError(
          "INCONSISTENT",
          `the server made an invite (${created.inviteId}, until ${created.expiresAt}) other than the one asked for`,
        );
      orgName = (await core.http.request<{ name: string }>("GET", `/orgs/${encodeURIComponent(account.orgId)}`)).name;
      const bytes = inviteStatementBytes({
        inviteId: created.inviteId,
        orgId: account.orgId,
        orgName,
        email: address,
        role,
        expiresAt: created.expiresAt,
        inviterId: account.userId,
      });
      const statement = { version: 1, signature: await signStatement(bytes, keys.signingPrivateKey) };
      await core.http.request("POST", `/invites/${encodeURIComponent(created.inviteId)}/statement`, { body: { statement } });
    } catch (err) {
      await core.http.request("DELETE", `/invites/${encodeURIComponent(created.inviteId)}`).catch(() => undefined);
      throw err;
    }
    const secret = randomBytes(INVITE_SECRET_BYTES);
    await core.inviteSecrets.set(address, { inviteId: created.inviteId, secret: toBase64(secret) });
    const code = formatInviteCode({
      token: created.token,
      secret,
      inviterKey: await keyFingerprint({ publicKey: account.publicKey, signingPublicKey: account.signingPublicKey }),
      inviteId: created.inviteId,
    });
    return { ...created, orgName, code, link: this.inviteLink(code) };
  }

  /** The web vault's link for an invite code: `<origin>/#/invite/<code>`, on the server this client talks to. */
  inviteLink(code: string): string {
    return `${this.core.http.baseUrl.replace(/\/api\/v1$/, "")}/#/invite/${code}`;
  }

  listInvites(orgId = this.core.account.orgId): Promise<Invite[]> {
    return this.core.http.request("GET", "/invites", { query: { orgId } });
  }

  async revokeInvite(inviteId: string): Promise<void> {
    await this.core.http.request("DELETE", `/invites/${encodeURIComponent(inviteId)}`);
  }

  /**
   * What an invite is for, checked: given a link or code that names the inviter's key, the
   * server's answer must be the invite that inviter signed, by that very key (`INVITE_MISMATCH`
   * otherwise, before anything else is sent). A bare token answers `verified: false`. Checking
   * does not use the invite up; registering with it does.
   */
  async redeemInvite(linkOrCode: string): Promise<CheckedInvite> {
    const code = parseInviteCode(linkOrCode);
    if (!code) throw new ApiError(400, "INVALID", "not an invite link, code or token", "token");
    const res = await this.core.http.request<Redeemable>("POST", "/invites/redeem", { auth: false, body: { token: code.token } });
    const invite: CheckedInvite = {
      ...res,
      token: code.token,
      secret: code.secret,
      inviterFingerprint: res.inviter ? groupedFingerprint(await keyFingerprint(res.inviter)) : "",
      verified: false,
    };
    if (!code.inviterKey) return invite;
    const mismatch = (why: string) =>
      new SecurityError(
        "INVITE_MISMATCH",
        `this invite is not the one your inviter made: ${why}. Nothing was sent; ask them for a new link`,
      );
    if (res.inviteId !== code.inviteId) throw mismatch(`the link is for invite ${code.inviteId}, the server shows invite ${res.inviteId}`);
    const inviter = res.inviter;
    if (!inviter?.keyStatement) throw mismatch("the server shows no inviter who signed their own id, email and keys");
    try {
      // The inviter's id, email and keys, as the inviter signed them: the email shown is theirs.
      await selfConsistent(inviter, inviter.userId);
    } catch (err) {
      if (err instanceof SecurityError) throw mismatch(err.message);
      throw err;
    }
    const shown = await keyFingerprint(inviter);
    if (shown !== code.inviterKey)
      throw mismatch(
        `the link names the inviter's key ${groupedFingerprint(code.inviterKey)}, the server shows ${inviter.email} with ${groupedFingerprint(shown)}`,
      );
    if (!res.inviteStatement) throw mismatch("the inviter's signed statement of it is missing");
    const bytes = inviteStatementBytes({
      inviteId: res.inviteId,
      orgId: res.orgId,
      orgName: res.orgName ?? "",
      email: res.email,
      role: res.role,
      expiresAt: res.expiresAt,
      inviterId: inviter.userId,
    });
    if (!(await statementVerifies(bytes, inviter.signingPublicKey, res.inviteStatement.signature)))
      throw mismatch(
        `the organization, email, role or expiry the server shows ("${res.orgName}", ${res.email}, ${res.role}) is not what ${inviter.email} signed`,
      );
    if (!(Date.parse(res.expiresAt) > Date.now())) throw mismatch(`it expired at ${res.expiresAt}`);
    return { ...invite, verified: true };
  }

  /** After registering through a verified invite: the inviter's keys, vouched for by the link, pinned as such (checked against the pins first). */
  pinInviter(invite: CheckedInvite): Promise<void> {
    return this.trust.pinVouched(invite.inviter, "invite");
  }
}
