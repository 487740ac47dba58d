/** Invite commands: create, list, revoke, check. */
import { table } from "../output";
import { confirmOrStop } from "../password";
import { type Command, ROLE_OPTION, YES_OPTION, parseRole, inviteTrustLine } from "./shared";

export const inviteCommands: Command[] = [
  {
    path: ["invite", "create"],
    args: ["<email>"],
    summary: "Invite someone to your organization (owners and admins); prints the one-time link",
    options: {
      role: ROLE_OPTION,
      expires: { type: "string", value: "DURATION", description: "e.g. 24h or 7d (default: the server's, 72h)" },
    },
    async run(ctx, [email], opts) {
      // Unlocked: the invite is signed with your key, and its link vouches for the keys they register.
      const invite = await (await ctx.unlocked()).invites.create(email!, parseRole(opts.role), opts.expires);
      return {
        json: invite,
        text: [
          `Invite ${invite.inviteId} for ${email} to join "${invite.orgName}" as ${parseRole(opts.role)}, valid until ${invite.expiresAt}; signed by you as such.`,
          "Link (shown once; send it privately, the whole of it: it carries your key fingerprint and a secret that proves their keys to you):",
          invite.link,
          `They open it in the web vault, or run: vaultctl register ${email} --invite '<the link>'`,
        ].join("\n"),
      };
    },
  },
  {
    path: ["invite", "list"],
    args: [],
    summary: "Pending invites of your organization, newest first",
    async run(ctx) {
      const invites = await ctx.loggedIn().invites.list();
      return {
        json: invites,
        text: table(
          ["ID", "EMAIL", "ROLE", "EXPIRES"],
          invites.map((i) => [i.id, i.email, i.role, i.expiresAt]),
        ),
      };
    },
  },
  {
    path: ["invite", "revoke"],
    args: ["<inviteId>"],
    summary: "Revoke a pending invite",
    options: { yes: YES_OPTION },
    async run(ctx, [inviteId], opts) {
      await confirmOrStop(`Revoke invite ${inviteId}? Its link stops working.`, opts.yes === true);
      await ctx.loggedIn().invites.revoke(inviteId!);
      return { json: { revoked: inviteId }, text: `Revoked invite ${inviteId}.` };
    },
  },
  {
    path: ["invite", "check"],
    args: ["<link>"],
    summary: "What an invite link (or code, or token) is for, checked against what its inviter signed (no login; does not use it up)",
    async run(ctx, [link]) {
      const invite = await ctx.anonymous().invites.redeem(link!);
      const { token: _token, secret: _secret, ...shown } = invite;
      return {
        json: shown,
        text: [
          `Invite for ${invite.email} as ${invite.role} of ${invite.orgName ? `"${invite.orgName}" (organization ${invite.orgId})` : `organization ${invite.orgId}`}, valid until ${invite.expiresAt}.`,
          inviteTrustLine(invite),
        ].join("\n"),
      };
    },
  },

  // ---- Keys ----
];
