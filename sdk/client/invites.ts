/** Invites: made by owners and admins, checked by the invitee before registering with one. */
import type { ClientCore } from "./core";
import type { Invite } from "./types";

export class Invites {
  constructor(private readonly core: ClientCore) {}

  createInvite(
    email: string,
    role: "admin" | "member" = "member",
    expiresIn?: string,
  ): Promise<{ inviteId: string; token: string; expiresAt: string }> {
    return this.core.http.request("POST", "/invites", { body: { email, role, expiresIn } });
  }

  listInvites(orgId = this.core.account.orgId): Promise<Invite[]> {
    return this.core.http.request("GET", "/invites", { query: { orgId } });
  }

  async revokeInvite(inviteId: string): Promise<void> {
    await this.core.http.request("DELETE", `/invites/${encodeURIComponent(inviteId)}`);
  }

  /** Checks a token and tells what it is for; registering with it is what uses it up. */
  redeemInvite(token: string): Promise<{ orgId: string; orgName?: string; email: string; role: "admin" | "member"; expiresAt?: string }> {
    return this.core.http.request("POST", "/invites/redeem", { auth: false, body: { token } });
  }
}
