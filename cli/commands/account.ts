/** Account commands: register, login, logout, unlock, lock, whoami. */
import { DEFAULT_ARGON2ID, DEFAULT_PBKDF2, normalizeEmail, type CheckedInvite, type KdfChoice, type VaultClient } from "../../sdk";
import type { Context } from "../context";
import { readPassword } from "../password";
import { type Command, usage, pick, inviteTrustLine } from "./shared";

export const accountCommands: Command[] = [
  {
    path: ["register"],
    args: ["<email>"],
    summary: "Create an account (with an invite link, or as the server's first user) and log in",
    options: {
      invite: {
        type: "string",
        value: "LINK",
        description: "the invite link (or its code, or a bare token) an admin sent you; checked against what they signed first",
      },
      "org-name": { type: "string", value: "NAME", description: "name of the new organization (first user or open registration)" },
      kdf: { type: "string", value: "KDF", description: "argon2id (default: 3 passes, 64 MiB, 4 lanes) or pbkdf2 (600,000 iterations)" },
    },
    async run(ctx, [email], opts) {
      const kdf: KdfChoice =
        opts.kdf === undefined || opts.kdf === "argon2id"
          ? DEFAULT_ARGON2ID
          : opts.kdf === "pbkdf2"
            ? DEFAULT_PBKDF2
            : usage(`--kdf must be argon2id or pbkdf2, not ${opts.kdf}`);
      const client = ctx.anonymous();
      let invite: CheckedInvite | undefined;
      if (opts.invite) {
        invite = await client.redeemInvite(opts.invite);
        if (invite.email !== normalizeEmail(email!)) usage(`this invite is for ${invite.email}, not ${email}`);
      }
      const password = await readPassword(ctx.passwords, "Choose a master password: ", { confirm: true });
      const account = await client.register({ email: email!, password, invite: opts.invite, orgName: opts["org-name"], kdf });
      saveLogin(ctx, client);
      return {
        json: {
          ...pick(account, "userId", "orgId", "role", "email"),
          fingerprint: await client.ownFingerprint(),
          inviteVerified: invite?.verified,
        },
        text: [
          `Registered and logged in as ${account.email} (${account.role} of organization ${account.orgId}).`,
          `Your user id: ${account.userId}`,
          `Your key fingerprint: ${await client.ownFingerprint()}`,
          ...(invite ? [inviteTrustLine(invite)] : []),
        ].join("\n"),
      };
    },
  },
  {
    path: ["login"],
    args: ["<email>"],
    summary: "Log in; the tokens are saved (0600), the password is not",
    async run(ctx, [email]) {
      const client = ctx.anonymous();
      const password = await readPassword(ctx.passwords, `Master password for ${email}: `);
      const account = await client.login(email!, password);
      ctx.state.forgetUnlocked();
      saveLogin(ctx, client);
      return {
        json: pick(account, "userId", "orgId", "role", "email"),
        text: `Logged in as ${account.email} (${account.role} of organization ${account.orgId}).\nCommands that need your keys ask for the password; \`vaultctl unlock\` avoids that for a shell session.`,
      };
    },
  },
  {
    path: ["logout"],
    args: [],
    summary: "End the login on the server and forget it here",
    async run(ctx) {
      const client = ctx.loggedIn();
      try {
        await client.logout();
      } finally {
        ctx.state.forgetLogin();
      }
      return { json: { loggedOut: true }, text: "Logged out." };
    },
  },
  {
    path: ["unlock"],
    args: [],
    summary: "Check the password once and print a VAULT_SESSION value for scripts",
    options: { raw: { type: "boolean", description: "print the session value only" } },
    async run(ctx, _args, opts) {
      const client = ctx.loggedIn();
      await client.unlock(await readPassword(ctx.passwords, `Master password for ${client.account.email}: `));
      const session = await ctx.createSession(client);
      return {
        json: { session },
        text: opts.raw
          ? session
          : `Unlocked. To use it in this shell:\nexport VAULT_SESSION="${session}"\n\`vaultctl lock\` ends every session.`,
      };
    },
  },
  {
    path: ["lock"],
    args: [],
    summary: "Forget the unlocked key: every VAULT_SESSION value stops working",
    async run(ctx) {
      ctx.state.forgetUnlocked();
      return { json: { locked: true }, text: "Locked." };
    },
  },
  {
    path: ["whoami"],
    args: [],
    summary: "Who is logged in, where",
    async run(ctx) {
      const me = await ctx.loggedIn().me();
      return {
        json: { ...me, server: ctx.server },
        text: `${me.email} (${me.role} of organization ${me.orgId}) on ${ctx.server}\nuser id ${me.userId}`,
      };
    },
  },

  // ---- Vaults ----
];

function saveLogin(ctx: Context, client: VaultClient): void {
  ctx.state.saveLogin({ server: client.http.baseUrl, account: client.account, tokens: client.http.currentTokens! });
}
