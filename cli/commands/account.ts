/** Account commands: register, login, logout, unlock, lock, whoami, and the account's sessions. */
import {
  DEFAULT_ARGON2ID,
  DEFAULT_PBKDF2,
  normalizeEmail,
  ProtectionInterruptedError,
  type CheckedInvite,
  type KdfChoice,
  type ProtectionResult,
} from "../../sdk";
import { UsageError } from "../output";
import { askYesNo, readNewPassword, readPassword } from "../password";
import { emergencyLines, emergencyNotice } from "./emergency";
import { secondFactorPrompt } from "./security";
import { table } from "../output";
import { type Command, usage, pick, plural, inviteTrustLine, recoveryLines, saveLogin } from "./shared";

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
      const kdf = kdfChoice(opts.kdf);
      const client = ctx.anonymous();
      let invite: CheckedInvite | undefined;
      if (opts.invite) {
        invite = await client.invites.redeem(opts.invite);
        if (invite.email !== normalizeEmail(email!)) usage(`this invite is for ${invite.email}, not ${email}`);
      }
      const password = await readPassword(ctx.passwords, "Choose a master password: ", { confirm: true });
      const account = await client.register({ email: email!, password, invite: opts.invite, orgName: opts["org-name"], kdf });
      saveLogin(ctx, client);
      return {
        json: {
          ...pick(account, "userId", "orgId", "role", "email"),
          fingerprint: await client.keys.own(),
          inviteVerified: invite?.verified,
        },
        text: [
          `Registered and logged in as ${account.email} (${account.role} of organization ${account.orgId}).`,
          `Your user id: ${account.userId}`,
          `Your key fingerprint: ${await client.keys.own()}`,
          ...(invite ? [inviteTrustLine(invite)] : []),
        ].join("\n"),
      };
    },
  },
  {
    path: ["login"],
    args: ["<email>"],
    summary: "Log in; the tokens are saved (0600), the password is not",
    options: {
      totp: { type: "string", value: "CODE", description: "a code from your authenticator app, if the account asks for a second factor" },
      "recovery-code": { type: "string", value: "CODE", description: "one of your recovery codes instead (each works once)" },
    },
    async run(ctx, [email], opts) {
      const client = ctx.anonymous({ secondFactor: secondFactorPrompt(opts.totp, opts["recovery-code"]) });
      const password = await readPassword(ctx.passwords, `Master password for ${email}: `);
      const account = await client.login(email!, password);
      ctx.state.forgetUnlocked();
      saveLogin(ctx, client);
      await emergencyNotice(client);
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
      await emergencyNotice(client);
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

  {
    path: ["password", "change"],
    args: [],
    summary: "Change the master password; asks whether the old one may be known, and if so also rotates your keys and rekeys your vaults",
    options: {
      kdf: { type: "string", value: "KDF", description: "new parameters: argon2id (default) or pbkdf2" },
      "new-password-file": { type: "string", value: "FILE", description: "read the new password from the first line of FILE" },
      "new-password-env": { type: "string", value: "NAME", description: "read the new password from the environment variable NAME" },
      "old-password-known": {
        type: "boolean",
        description: "the old password may be known to someone: also rotate your keys and rekey your vaults (without the question)",
      },
      "old-password-safe": {
        type: "boolean",
        description: "nobody else can know the old password: change it only (without the question)",
      },
    },
    async run(ctx, _args, opts) {
      const kdf = kdfChoice(opts.kdf);
      if (opts["old-password-known"] && opts["old-password-safe"])
        throw new UsageError("--old-password-known and --old-password-safe say opposite things: give one");
      const client = ctx.loggedIn();
      const current = await readPassword(ctx.passwords, `Current master password for ${client.account.email}: `);
      await client.unlock(current);
      const next = await readNewPassword({ file: opts["new-password-file"], env: opts["new-password-env"] }, "New master password: ");
      const oldPasswordMayBeKnown = opts["old-password-known"]
        ? true
        : opts["old-password-safe"]
          ? false
          : await askYesNo(
              "Could anyone else know your old master password (it leaked, was shared, or was typed on a machine you do not trust)?\n" +
                "If so, vaultctl also rotates your keys and gives your vaults new keys, so that the old password stops opening what you write from now on.",
            );
      const result = await client.changePassword(current, next, { kdf, oldPasswordMayBeKnown }).catch((err: unknown) => {
        if (err instanceof ProtectionInterruptedError) {
          ctx.state.forgetUnlocked();
          saveLogin(ctx, client);
          throw new Error(`${err.message}\nYour new master password is in force: run \`vaultctl password protect\` to finish.`);
        }
        throw err;
      });
      // The login goes on with the new keys; a VAULT_SESSION sealed the old stretched key: it ends.
      ctx.state.forgetUnlocked();
      saveLogin(ctx, client);
      return {
        json: result,
        text: [
          `Master password changed (account version ${result.accountVersion}).`,
          `${plural(result.vaults, "personal vault")} wrapped again; ${plural(result.sessionsEnded, "other session")} ended: log in there again with the new password.`,
          ...recoveryLines(result.recovery, "the old password's key"),
          ...emergencyLines(result.emergency),
          ...(result.protection
            ? protectionLines(result.protection)
            : [
                "Your keys and your vaults' keys are the same as before: the old password, with a copy of the server's data from before this change, still opens them, and everything written from now on. If it may be known, run `vaultctl password protect`.",
              ]),
        ].join("\n"),
      };
    },
  },
  {
    path: ["password", "protect"],
    args: [],
    summary: "Cut an old master password off: rotate your keys, rekey your personal vaults and the shared vaults you manage",
    async run(ctx) {
      const client = ctx.loggedIn();
      await client.unlock(await readPassword(ctx.passwords, `Master password for ${client.account.email}: `));
      const result = await client.protect().finally(() => {
        ctx.state.forgetUnlocked();
        saveLogin(ctx, client);
      });
      const lines = [...protectionLines(result), ...recoveryLines(result.recovery, "the old keys"), ...emergencyLines(result.emergency)];
      return { json: result, text: lines.join("\n") };
    },
  },
  {
    path: ["session", "list"],
    args: [],
    summary: "The account's logins on the server, the most recently used first (not VAULT_SESSION values: those are `lock`'s)",
    async run(ctx) {
      const sessions = await ctx.loggedIn().sessions.list();
      return {
        json: sessions,
        text: table(
          ["SESSION", "DEVICE", "LAST USED", "FROM", "SINCE"],
          sessions.map((s) => [s.sessionId + (s.current ? " (this one)" : ""), s.deviceName, s.lastUsedAt, s.address, s.createdAt]),
        ),
      };
    },
  },
  {
    path: ["session", "end"],
    args: ["<session?>"],
    summary: "End one login (its id from `vaultctl session list`), or --others: every login but this one",
    options: { others: { type: "boolean", description: "end every session but this one" } },
    async run(ctx, [sessionId], opts) {
      if (Boolean(opts.others) === (sessionId !== undefined)) usage("give a session id, or --others");
      const client = ctx.loggedIn();
      if (opts.others) {
        const ended = await client.sessions.endOthers();
        return { json: { ended }, text: `Ended ${plural(ended, "other session")}.` };
      }
      await client.sessions.end(sessionId!);
      return {
        json: { ended: 1 },
        text: `Ended session ${sessionId}: it can no longer refresh, and its access tokens stop within seconds.`,
      };
    },
  },
];

function kdfChoice(name: string | undefined): KdfChoice {
  if (name === undefined || name === "argon2id") return DEFAULT_ARGON2ID;
  if (name === "pbkdf2") return DEFAULT_PBKDF2;
  return usage(`--kdf must be argon2id or pbkdf2, not ${name}`);
}

/** What a protection did, and what it left, in lines. */
function protectionLines(p: ProtectionResult): string[] {
  return [
    `Keys rotated (key version ${p.keyVersion}; your fingerprint is now ${p.fingerprint}); ${plural(p.rekeyed.length, "vault")} given a new key.`,
    ...(p.left.length === 0
      ? ["The old password, with a copy of the server's data from before, opens nothing you write from now on."]
      : [
          `${plural(p.left.length, "shared vault")} ${p.left.length === 1 ? "keeps its" : "keep their"} key: the old password, with a copy of the server's data from before, still opens what is written there until they are rekeyed:`,
          ...p.left.map((v) => `  ${v.vaultName}: ${v.detail}`),
        ]),
  ];
}
