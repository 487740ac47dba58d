/** Every CLI command: what it takes, what it says, and the SDK calls it makes. */
import fs from "node:fs";
import {
  ApiError,
  DEFAULT_ARGON2ID,
  DEFAULT_PBKDF2,
  describeLink,
  generatePassword,
  GRANTABLE_ROLES,
  normalizeEmail,
  type GrantableRole,
  SecurityError,
  type CheckedInvite,
  type CheckedVault,
  type TrustLevel,
  type Item,
  type KdfChoice,
  type PublicKeyBundle,
  type Vault,
  type VaultClient,
  type VaultRole,
} from "../sdk";
import { readSavedRoster, verifySavedRoster, type SavedRoster } from "./roster";
import { auditKeyFingerprint, verifyAuditExport, type AuditExport } from "../sdk/audit";
import { sameFingerprint } from "../sdk/fingerprints";
import { AUDIT_KEY_PIN } from "../sdk/client/audit";
import type { Context } from "./context";
import { EXIT, NotFoundError, progressBar, table, UsageError, type Output } from "./output";
import { confirmOrStop, readPassword } from "./password";
import { didYouMean } from "./suggest";

export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  /** Shown in help as `--name VALUE`. */
  value?: string;
  description: string;
}

export interface Command {
  path: string[];
  /** Positional arguments, e.g. `<vault> <name>`; a trailing `?` marks an optional one. */
  args: string[];
  summary: string;
  options?: Record<string, OptionSpec>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command reads the options its own spec declares
  run(ctx: Context, args: string[], opts: Record<string, any>): Promise<Output>;
}

const ROLE_OPTION: OptionSpec = { type: "string", value: "ROLE", description: "member (default) or admin" };
/** Destructive commands ask first on a terminal; scripts say --yes. */
const YES_OPTION: OptionSpec = { type: "boolean", description: "do it without asking (needed when standard input is not a terminal)" };

export const commands: Command[] = [
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
  {
    path: ["vault", "list"],
    args: [],
    summary: "The vaults you can open, each name checked against the vault's signed roster",
    async run(ctx) {
      const vaults = await ctx.loggedIn().listCheckedVaults();
      return {
        json: vaults.map((v) => ({ ...vaultSummary(v), vaultName: v.nameCheck.name, nameCheck: v.nameCheck })),
        text: [
          table(
            ["ID", "NAME", "TYPE", "ROLE", "KEY", "REKEY"],
            vaults.map((v) => [v.vaultId, shownName(v, false), v.vaultType, v.role, `v${v.keyVersion}`, v.rekeyRequired ? "required" : ""]),
          ),
          ...(vaults.some((v) => v.nameCheck.status !== "verified")
            ? ["(?) no signed roster vouches for this name; (!) the server shows another name than the vault's signed roster"]
            : []),
        ].join("\n"),
      };
    },
  },
  {
    path: ["vault", "create"],
    args: ["<name>"],
    summary: "Create a vault (shared unless --personal) with a new random key",
    options: {
      personal: { type: "boolean", description: "a personal vault: its key wrapped with AES-KW under your stretched key, never shared" },
    },
    async run(ctx, [name], opts) {
      const vault = await (await ctx.unlocked()).createVault(name!, opts.personal ? "personal" : "shared");
      return { json: vaultSummary(vault), text: `Created ${vault.vaultType} vault "${vault.vaultName}": ${vault.vaultId}` };
    },
  },
  {
    path: ["vault", "rename"],
    args: ["<vault>", "<name>"],
    summary: "Rename a vault (owner or admin); renaming it to its own name vouches for a name no roster link names yet",
    async run(ctx, [vaultRef, name]) {
      // Unlocked: on a signed vault the new name is a link signed with your key.
      const client = await ctx.unlocked();
      const vault = await client.renameVault((await findVault(client, vaultRef!)).vaultId, name!);
      return { json: vaultSummary(vault), text: `Renamed to "${vault.vaultName}" (signed into the vault's roster).` };
    },
  },
  {
    path: ["vault", "delete"],
    args: ["<vault>"],
    summary: "Delete a vault with all its items (owner)",
    options: { yes: YES_OPTION },
    async run(ctx, [vaultRef], opts) {
      const client = ctx.loggedIn();
      const vault = await findVault(client, vaultRef!);
      await confirmOrStop(`Delete vault ${shownName(vault)} and all its items, for every member?`, opts.yes === true);
      await client.deleteVault(vault.vaultId);
      return { json: { deleted: vault.vaultId }, text: `Deleted vault ${shownName(vault)}.` };
    },
  },
  {
    path: ["vault", "members"],
    args: ["<vault>"],
    summary: "A vault's members and who wrapped each one's key, checked against its signed roster",
    async run(ctx, [vaultRef]) {
      const client = ctx.loggedIn();
      const vault = await findVault(client, vaultRef!);
      const [{ members, roster }, org] = await Promise.all([client.verifiedMembers(vault.vaultId), client.orgMembers()]);
      const email = new Map(org.filter((m) => !m.problem).map((m) => [m.userId, m.email]));
      return {
        json: members.map((m) => ({ userId: m.userId, email: email.get(m.userId), role: m.role, senderId: m.senderId })),
        text: [
          table(
            ["USER", "EMAIL", "ROLE", "WRAPPED BY"],
            members.map((m) => [m.userId, email.get(m.userId) ?? "", m.role, email.get(m.senderId) ?? m.senderId]),
          ),
          roster ? `Verified against the signed roster (link ${roster.state.seq}).` : "No signed roster: this list is the server's word.",
        ].join("\n"),
      };
    },
  },
  {
    path: ["vault", "share"],
    args: ["<vault>", "<user>"],
    summary: "Wrap the vault key for a user of your organization (email or id) and add them",
    options: { role: ROLE_OPTION },
    async run(ctx, [vaultRef, userRef], opts) {
      const role = parseRole(opts.role);
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const user = await findUser(client, userRef!);
      await client.share(vault.vaultId, user.userId, role);
      const { current, trust } = await client.fingerprint(user.userId);
      return {
        json: { vaultId: vault.vaultId, userId: user.userId, email: user.email, role, fingerprint: current, trust, stated: user.stated },
        text: `Shared ${shownName(vault)} with ${user.email} as ${role}.\nKey fingerprint of ${user.email} (user ${user.userId}): ${current}\n${trustLine(user.email, trust)}${statedLine(user)}`,
      };
    },
  },
  {
    path: ["vault", "remove"],
    args: ["<vault>", "<user>"],
    summary: "Remove a member (or yourself), then rekey the vault at once (--no-rekey to leave it for later)",
    options: {
      rekey: {
        type: "boolean",
        description: "rekey right after a removal that needs one (the default; --no-rekey leaves it, and writes wait until it is done)",
      },
      yes: YES_OPTION,
    },
    async run(ctx, [vaultRef, userRef], opts) {
      // Unlocked: on a vault with a signed roster, the removal is a link signed with your key.
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const user = await findUser(client, userRef!);
      await confirmOrStop(
        user.userId === client.account.userId ? `Leave vault ${shownName(vault)}?` : `Remove ${user.email} from vault ${shownName(vault)}?`,
        opts.yes === true,
      );
      const result = await client.removeMember(vault.vaultId, user.userId);
      const lines = [`Removed ${user.email} from ${shownName(vault)}.`];
      let rekey;
      if (result.rekeyRequired && opts.rekey !== false && user.userId !== client.account.userId) {
        rekey = await runRekey(ctx, client, vault.vaultId);
        lines.push(
          `Rekeyed: key version ${rekey.keyVersion}, ${plural(rekey.items, "item")} re-encrypted, wrapped for ${plural(rekey.members, "member")}.`,
        );
      } else if (result.rekeyRequired && user.userId !== client.account.userId) {
        lines.push(
          `Rekey required: ${user.email} still holds the old key; nothing can be added or shared until then. Run: vaultctl rekey ${vault.vaultId}`,
        );
      }
      return {
        json: { vaultId: vault.vaultId, removed: user.userId, rekeyRequired: result.rekeyRequired && !rekey, rekey },
        text: lines.join("\n"),
      };
    },
  },
  {
    path: ["rekey"],
    args: ["<vault>"],
    summary: "New vault key: every item re-encrypted, the key re-wrapped for every member, in one call",
    async run(ctx, [vaultRef]) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const result = await runRekey(ctx, client, vault.vaultId);
      return {
        json: { vaultId: vault.vaultId, ...result },
        text: `Rekeyed ${shownName(vault)}: key version ${result.keyVersion}, ${plural(result.items, "item")} re-encrypted, wrapped for ${plural(result.members, "member")}${result.attempts > 1 ? ` (after ${result.attempts - 1} retries: the vault changed meanwhile)` : ""}.`,
      };
    },
  },
  {
    path: ["verify"],
    args: ["<vault-or-file>"],
    summary:
      "Check a vault: its signed roster, every member's wrap and its items against the signed item log; or, given a file from `roster --save`, that roster offline",
    options: {
      compare: {
        type: "string",
        value: "FINGERPRINT",
        description: "the vault's fingerprint as another member reads it to you: the same means you both see one history",
      },
    },
    async run(ctx, [vaultRef], opts) {
      if (fs.existsSync(vaultRef!)) return verifyOffline(ctx, vaultRef!);
      const client = await ctx.unlocked();
      const report = await client.verifyVault((await findVault(client, vaultRef!, { toVerify: true })).vaultId);
      const compared =
        opts.compare === undefined ? undefined : report.fingerprint !== null && sameFingerprint(report.fingerprint, opts.compare as string);
      if (compared === false)
        report.problems.push(
          `the fingerprint you were given (${opts.compare as string}) is not this vault's (${report.fingerprint}): one of you is shown another history`,
        );
      const lines = [
        `Vault "${report.vaultName}" (${report.vaultType}, key version ${report.keyVersion}): ${report.ok ? "OK" : "PROBLEMS FOUND"}`,
      ];
      for (const m of report.members) {
        const who = `${m.email ?? m.userId} (${m.role})`;
        lines.push(m.ok ? `  ok    ${who}, wrapped by ${nameOf(report, m.senderId)}` : `  FAIL  ${who}: ${m.problems.join("; ")}`);
      }
      if (report.roster)
        lines.push(`  ok    signed roster: ${report.roster.seq + 1} links verified, head ${report.roster.head.slice(0, 16)}…`);
      if (report.items)
        lines.push(
          `  ok    signed item log: ${plural(report.items.count, "item")} as its link ${report.items.seq} leaves them, head ${report.items.head.slice(0, 16)}…`,
        );
      if (report.fingerprint)
        lines.push(
          `        fingerprint ${report.fingerprint}${compared ? " (the same as the one you were given)" : ": compare it with another member by phone"}`,
        );
      for (const p of report.problems) lines.push(`  FAIL  ${p}`);
      for (const w of report.warnings) lines.push(`  note  ${w}`);
      const ok = report.ok && compared !== false;
      return {
        json: { ...report, ok, ...(compared !== undefined && { compared }) },
        text: lines.join("\n"),
        exitCode: ok ? EXIT.ok : EXIT.security,
      };
    },
  },

  {
    path: ["audit", "verify"],
    args: ["<file?>"],
    summary: "Check the organization's audit log here (or, given a file from `audit export`, offline) against the pinned audit key",
    options: {
      key: {
        type: "string",
        value: "KEY",
        description: "the audit key (base64) to check a file with, instead of the one pinned for the server",
      },
    },
    async run(ctx, [file], opts) {
      if (file) {
        const pinned = await ctx.state.pins(ctx.server).get(AUDIT_KEY_PIN);
        const key = (opts.key as string | undefined) ?? (typeof pinned === "string" ? pinned : pinned?.fingerprint);
        if (!key) usage(`no audit key is pinned for ${ctx.server}: give the one you trust with --key (the server's: GET /audit/key)`);
        const chain = await verifyAuditExport(JSON.parse(fs.readFileSync(file, "utf8")) as AuditExport, key);
        return {
          json: { ok: true, count: chain.count, head: chain.head, auditKey: await auditKeyFingerprint(key) },
          text: `Audit log in ${file}: OK, checked offline: ${plural(chain.count, "record")}, each hash recomputed and linked to the one before; head ${chain.head.slice(0, 16)}… signed by audit key ${(await auditKeyFingerprint(key)).slice(0, 16)}…`,
        };
      }
      const client = ctx.loggedIn();
      const checked = await client.verifyAuditLog();
      return {
        json: {
          ok: true,
          count: checked.count,
          seq: checked.seq,
          head: checked.head,
          checkedNow: checked.checkedNow,
          auditKey: checked.auditKeyFingerprint,
          fingerprint: checked.fingerprint,
        },
        text: [
          `Audit log: OK, checked here: ${plural(checked.count, "record")}${checked.seenBefore ? ` (${checked.checkedNow} new since record ${checked.seenBefore.seq}, which this machine saw and which is unchanged)` : ""}, each hash recomputed and linked to the one before, none missing.`,
          `Head ${checked.head.slice(0, 16)}… (record ${checked.seq}), signed by the server's audit key ${checked.auditKeyFingerprint.slice(0, 16)}…; fingerprint ${checked.fingerprint} (compare it with another admin by phone).`,
          "What each record says happened is the server's word; that none was dropped, reordered or changed since this machine saw it is checked.",
        ].join("\n"),
      };
    },
  },
  {
    path: ["audit", "export"],
    args: ["<file>"],
    summary:
      "Save the organization's audit log, checked, with a checkpoint signed by the server's audit key (for `audit verify FILE` anywhere)",
    async run(ctx, [file]) {
      const exported = await ctx.loggedIn().exportAuditLog();
      fs.writeFileSync(file!, JSON.stringify(exported, null, 2) + "\n");
      return {
        json: { file, count: exported.records.length, head: exported.checkpoint.head },
        text: `Saved ${plural(exported.records.length, "audit record")} to ${file} (head ${exported.checkpoint.head.slice(0, 16)}…, signed by the audit key ${(await auditKeyFingerprint(exported.auditKey)).slice(0, 16)}…).`,
      };
    },
  },

  {
    path: ["roster"],
    args: ["<vault>"],
    summary: "A vault's signed roster, verified: who changed its membership and key, when",
    options: {
      save: {
        type: "string",
        value: "FILE",
        description: "also save it with the signers' public keys, for `vaultctl verify FILE` offline",
      },
    },
    async run(ctx, [vaultRef], opts) {
      const client = ctx.loggedIn();
      const vault = await findVault(client, vaultRef!);
      const roster = await client.verifiedRoster(vault.vaultId);
      if (!roster) {
        return {
          json: { vaultId: vault.vaultId, signed: false, links: [] },
          text: `Vault ${shownName(vault)} has no signed roster: its member list is the server's word. An owner can adopt it: vaultctl vault adopt ${vault.vaultId}`,
        };
      }
      const org = await client.orgMembers();
      // Emails only of people whose keys and identity check out; anyone else by id.
      const emails = new Map(org.filter((m) => !m.problem).map((m) => [m.userId, m.email]));
      const name = (id: string) => emails.get(id) ?? id;
      if (opts.save) {
        const ids = new Set(
          roster.links.flatMap((l) => [l.actorId, ...(l.subjectId ? [l.subjectId] : []), ...(l.members ?? []).map((m) => m.userId)]),
        );
        const keys: Record<string, PublicKeyBundle> = {};
        for (const id of ids) {
          const bundle = org.find((m) => m.userId === id && !m.problem);
          if (bundle)
            keys[id] = {
              userId: id,
              email: bundle.email,
              publicKey: bundle.publicKey,
              signingPublicKey: bundle.signingPublicKey,
              publicKeySignature: bundle.publicKeySignature,
            };
        }
        const saved: SavedRoster = {
          format: "vault-roster/v1",
          server: ctx.server,
          vaultId: vault.vaultId,
          vaultName: vault.nameCheck.name,
          links: roster.links,
          keys,
        };
        fs.writeFileSync(opts.save, JSON.stringify(saved, null, 2) + "\n", { mode: 0o600 });
      }
      const { state } = roster;
      return {
        json: {
          vaultId: vault.vaultId,
          signed: true,
          seq: state.seq,
          head: state.head,
          keyVersion: state.keyVersion,
          rekeyRequired: state.rekeyRequired,
          members: [...state.members].map(([userId, m]) => ({ userId, email: emails.get(userId), role: m.role, key: m.key })),
          links: roster.links,
        },
        text: [
          `Signed roster of ${shownName(vault)}: ${roster.links.length} links, all verified; head ${state.head.slice(0, 16)}… (seq ${state.seq}), key version ${state.keyVersion}`,
          table(
            ["SEQ", "AT", "BY", "CHANGE"],
            roster.links.map((l) => [String(l.seq), l.at, name(l.actorId), describeLink(l, name)]),
          ),
          `Members: ${[...state.members].map(([id, m]) => `${name(id)} (${m.role})`).join(", ")}${state.rekeyRequired ? "\nRekey required: a member was removed since the last rekey." : ""}`,
          ...(opts.save ? [`Saved to ${opts.save}.`] : []),
        ].join("\n"),
      };
    },
  },
  {
    path: ["vault", "adopt"],
    args: ["<vault>"],
    summary: "Give a vault made without one a signed roster (owner): a new key, for exactly the members you confirm",
    options: {
      member: {
        type: "string",
        multiple: true,
        value: "USER",
        description:
          "a member to keep, with their role (email or id, then :owner, :admin or :member; you are owner and others member unless said; repeat for each, you included); without it, confirm the list shown",
      },
      name: {
        type: "string",
        value: "NAME",
        description:
          "the vault's name, signed into its roster (must be its current one); without it, confirm the name shown, or with --member leave it unsigned",
      },
      yes: YES_OPTION,
    },
    async run(ctx, [vaultRef], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!, { toVerify: true });
      const listed = await client.members(vault.vaultId);
      const org = await client.orgMembers();
      const emailOf = (id: string) =>
        org.find((m) => m.userId === id && !m.problem)?.email ?? `user ${id} (keys or identity do not check out)`;
      let members: Array<{ userId: string; role: VaultRole }>;
      let name: string | undefined = opts.name;
      if (opts.member?.length) {
        members = [];
        for (const given of opts.member as string[]) {
          const [, ref, role] = /^(.*?)(?::(owner|admin|member))?$/.exec(given)!;
          const userId = (await findUser(client, ref!)).userId;
          members.push({ userId, role: (role as VaultRole | undefined) ?? (userId === client.account.userId ? "owner" : "member") });
        }
      } else {
        // What the owner confirms is what was shown: the members, their roles and the name (the SDK refuses a list that differs by then).
        await confirmOrStop(
          `The server says vault "${vault.vaultName}" has these members:\n${listed.map((m) => `  ${emailOf(m.userId)} (${m.role})`).join("\n")}\nIs that exactly who should hold it, each in that role, and is "${vault.vaultName}" its name? A new key is made for them alone, and the roles and the name are signed.`,
          opts.yes === true,
        );
        members = listed.map((m) => ({ userId: m.userId, role: m.role }));
        name ??= vault.vaultName;
      }
      const bar = progressBar(ctx.progress);
      let roster;
      try {
        roster = await client.adoptRoster(vault.vaultId, { members, name }, { onProgress: bar });
      } finally {
        bar.end();
      }
      return {
        json: { vaultId: vault.vaultId, seq: roster.state.seq, head: roster.state.head, members: roster.state.members.size },
        text: `Vault ${shownName(vault)} has a signed roster now, and a new key for its ${roster.state.members.size} members; from here on every membership change and rekey is a signed link.`,
      };
    },
  },

  // ---- Items ----
  {
    path: ["item", "list"],
    args: ["<vault>"],
    summary: "The vault's items, decrypted (names only)",
    async run(ctx, [vaultRef]) {
      const client = await ctx.unlocked();
      const items = await client.listItems((await findVault(client, vaultRef!)).vaultId);
      return {
        json: items.map((i) => ({ itemId: i.itemId, name: i.name, revision: i.revision, updatedAt: i.updatedAt })),
        text: table(
          ["ID", "NAME", "REV", "UPDATED"],
          items.map((i) => [i.itemId, i.name, String(i.revision), i.updatedAt]),
        ),
      };
    },
  },
  {
    path: ["item", "add"],
    args: ["<vault>", "<name>"],
    summary: "Add an item, encrypted on this machine",
    options: {
      field: { type: "string", multiple: true, value: "KEY=VALUE", description: "a field, e.g. username=ana (repeatable)" },
      generate: { type: "boolean", description: "add a random 24-character `password` field" },
      show: { type: "boolean", description: "with --generate: print the generated password" },
    },
    async run(ctx, [vaultRef, name], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const fields = parseFields(opts.field);
      if (opts.generate) fields.password = generatePassword(24);
      const item = await client.addItem(vault.vaultId, { name: name!, fields });
      const lines = [`Added "${item.name}" to ${shownName(vault)}: ${item.itemId}`];
      if (opts.generate && opts.show) lines.push(`Generated password: ${fields.password}`);
      else if (opts.generate)
        lines.push(
          `Generated a 24-character password (not shown; --show prints it, or: vaultctl item get ${vault.vaultId} ${item.itemId} --field password).`,
        );
      const json = {
        ...itemView(item),
        ...(opts.generate ? { generated: "password", ...(opts.show ? { password: fields.password } : {}) } : {}),
      };
      return { json, text: lines.join("\n") };
    },
  },
  {
    path: ["item", "get"],
    args: ["<vault>", "<item>"],
    summary: "Show an item (by id or name); --field prints one value only",
    options: { field: { type: "string", value: "KEY", description: "print only this field's value" } },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const item = await findItem(client, (await findVault(client, vaultRef!)).vaultId, itemRef!);
      if (opts.field !== undefined) {
        const value = item.fields[opts.field];
        if (value === undefined) throw new UsageError(`item "${item.name}" has no field ${opts.field}`);
        return { json: { [opts.field]: value }, text: value };
      }
      const lines = [
        `${item.name}  (${item.itemId}, revision ${item.revision})`,
        ...Object.entries(item.fields).map(([k, v]) => `  ${k}: ${v}`),
      ];
      return { json: itemView(item), text: lines.join("\n") };
    },
  },
  {
    path: ["item", "edit"],
    args: ["<vault>", "<item>"],
    summary: "Change an item's name or fields; refused if someone changed it meanwhile",
    options: {
      name: { type: "string", value: "NAME", description: "the new name" },
      field: { type: "string", multiple: true, value: "KEY=VALUE", description: "set a field (repeatable)" },
      "remove-field": { type: "string", multiple: true, value: "KEY", description: "remove a field (repeatable)" },
      generate: { type: "boolean", description: "set `password` to a new random 24-character value" },
    },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const vaultId = (await findVault(client, vaultRef!)).vaultId;
      const item = await findItem(client, vaultId, itemRef!);
      const fields = { ...item.fields, ...parseFields(opts.field) };
      for (const key of opts["remove-field"] ?? []) delete fields[key];
      if (opts.generate) fields.password = generatePassword(24);
      const edited = await client.editItem(vaultId, item.itemId, { name: opts.name ?? item.name, fields }, { revision: item.revision });
      return { json: itemView(edited), text: `Updated "${edited.name}" (revision ${edited.revision}).` };
    },
  },
  {
    path: ["item", "delete"],
    args: ["<vault>", "<item>"],
    summary: "Delete an item",
    options: { yes: YES_OPTION },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const vaultId = vault.vaultId;
      const item = await findItem(client, vaultId, itemRef!);
      await confirmOrStop(`Delete item "${item.name}" from vault ${shownName(vault)}?`, opts.yes === true);
      await client.deleteItem(vaultId, item.itemId);
      return { json: { deleted: item.itemId }, text: `Deleted "${item.name}".` };
    },
  },

  // ---- Invites ----
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
      const invite = await (await ctx.unlocked()).createInvite(email!, parseRole(opts.role), opts.expires);
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
      const invites = await ctx.loggedIn().listInvites();
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
      await ctx.loggedIn().revokeInvite(inviteId!);
      return { json: { revoked: inviteId }, text: `Revoked invite ${inviteId}.` };
    },
  },
  {
    path: ["invite", "check"],
    args: ["<link>"],
    summary: "What an invite link (or code, or token) is for, checked against what its inviter signed (no login; does not use it up)",
    async run(ctx, [link]) {
      const invite = await ctx.anonymous().redeemInvite(link!);
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
  {
    path: ["keys"],
    args: ["<user?>"],
    summary: "A user's key fingerprint (yours by default), to compare out of band",
    async run(ctx, [userRef]) {
      const client = ctx.loggedIn();
      if (!userRef) {
        const fingerprint = await client.ownFingerprint();
        return {
          json: { userId: client.account.userId, email: client.account.email, fingerprint, own: true },
          text: `${client.account.email} (you, user ${client.account.userId})\n  ${fingerprint}\n  your own keys: read this to the people you share with`,
        };
      }
      const user = await findUser(client, userRef, { evenIfUntrusted: true });
      const { current, pinned, trust } = await client.fingerprint(user.userId);
      const status =
        pinned !== undefined && pinned !== current
          ? `CHANGED: pinned ${pinned}`
          : user.problem
            ? `NOT CHECKED OUT: ${user.problem.message}`
            : pinned === undefined
              ? "not pinned yet"
              : trustLine(user.email, trust);
      return {
        json: {
          userId: user.userId,
          email: user.email,
          fingerprint: current,
          pinned: pinned ?? null,
          trust: trust ?? null,
          stated: user.stated,
        },
        text: `${user.email} (user ${user.userId})\n  ${current}\n  ${status}${statedLine(user, "\n  ")}`,
      };
    },
  },
  {
    path: ["trust"],
    args: ["<user>", "<fingerprint>"],
    summary: "Accept a user's changed keys after checking the new fingerprint with them",
    async run(ctx, [userRef, fingerprint]) {
      const client = ctx.loggedIn();
      const user = await findUser(client, userRef!, { evenIfUntrusted: true });
      const normalized =
        fingerprint!
          .replace(/\s+/g, "")
          .toLowerCase()
          .match(/.{1,4}/g)
          ?.join(" ") ?? "";
      // The email checked is the one typed; given an id, the one the server lists, which the output names.
      const email = userRef!.includes("@") ? userRef! : user.email;
      await client.trustUser(user.userId, normalized, email);
      return {
        json: { userId: user.userId, email, fingerprint: normalized },
        text: `Pinned ${email} (user ${user.userId}): ${normalized}`,
      };
    },
  },
];

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function usage(message: string): never {
  throw new UsageError(message);
}

function saveLogin(ctx: Context, client: VaultClient): void {
  ctx.state.saveLogin({ server: client.http.baseUrl, account: client.account, tokens: client.http.currentTokens! });
}

function pick<T extends object, K extends keyof T>(obj: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, obj[k]])) as Pick<T, K>;
}

function vaultSummary(v: Vault) {
  return pick(v, "vaultId", "vaultName", "vaultType", "role", "keyVersion", "rekeyRequired", "orgId", "createdAt", "updatedAt");
}

function itemView(i: Item) {
  return pick(i, "itemId", "vaultId", "name", "fields", "revision", "createdAt", "updatedAt");
}

function parseRole(role: string | undefined): GrantableRole {
  if (role === undefined) return "member";
  const granted = GRANTABLE_ROLES.find((r) => r === role);
  return granted ?? usage(`--role must be ${GRANTABLE_ROLES.join(" or ")}, not ${role}`);
}

function parseFields(pairs: string[] | undefined): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf("=");
    if (at <= 0) usage(`--field takes KEY=VALUE, not ${pair}`);
    fields[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return fields;
}

/**
 * A user of your organization by email or id; not found names the closest email. A user whose
 * keys or identity fail the checks is refused, except where the command is about checking them
 * (`evenIfUntrusted`: `keys`, `trust`).
 */
async function findUser(
  client: VaultClient,
  ref: string,
  opts: { evenIfUntrusted?: boolean } = {},
): Promise<{ userId: string; email: string; stated: boolean; problem?: Error }> {
  try {
    return opts.evenIfUntrusted ? await client.findMember(ref) : await client.findUser(ref);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err;
    const emails = (await client.orgMembers()).map((m) => m.email);
    throw new NotFoundError(`no user ${ref} in your organization${didYouMean(ref.trim().toLowerCase(), emails)}`);
  }
}

/**
 * A vault by id, or by its exact name when that is unique among the caller's vaults; a name counts
 * only where the vault's signed roster vouches for it, so the server cannot point a name at another
 * vault (and a vault it misnames is refused).
 */
async function findVault(client: VaultClient, ref: string, opts: { toVerify?: boolean } = {}): Promise<CheckedVault> {
  const vaults = await client.listCheckedVaults();
  const byId = vaults.find((v) => v.vaultId === ref.toLowerCase());
  if (byId) return byId;
  // `verify` reports what is wrong with a vault: found by the name the server shows, if that is unique.
  const shown = vaults.filter((v) => v.vaultName === ref);
  if (opts.toVerify && shown.length === 1) return shown[0]!;
  const byName = vaults.filter((v) => v.nameCheck.status !== "unverified" && v.nameCheck.name === ref);
  if (byName.length === 1) {
    const check = byName[0]!.nameCheck;
    if (check.status === "mismatch")
      throw new SecurityError(
        "NAME_MISMATCH",
        `the server calls the vault whose signed roster names it "${ref}" "${check.shown}": refusing to use it by name`,
      );
    return byName[0]!;
  }
  if (byName.length > 1) usage(`${byName.length} vaults are named "${ref}": use an id (${byName.map((v) => v.vaultId).join(", ")})`);
  const misnamed = vaults.find((v) => v.nameCheck.status === "mismatch" && v.nameCheck.shown === ref);
  if (misnamed)
    throw new SecurityError(
      "NAME_MISMATCH",
      `the server calls vault ${misnamed.vaultId} "${ref}", but its signed roster names it "${misnamed.nameCheck.name}": refusing to use it by that name`,
    );
  const unvouched = vaults.filter((v) => v.nameCheck.status === "unverified" && v.vaultName === ref);
  // A vault of that name whose roster failed its checks: that failure is the answer.
  const failed = unvouched.find((v) => v.problem);
  if (failed) throw failed.problem;
  if (unvouched.length > 0)
    usage(
      `no signed roster vouches for the name "${ref}" (${unvouched.map((v) => v.vaultId).join(", ")}): use the vault's id, or have an owner or admin confirm the name (vaultctl vault rename <id> "${ref}")`,
    );
  throw new NotFoundError(
    `no vault "${ref}" among yours${didYouMean(
      ref,
      vaults.map((v) => v.nameCheck.name),
    )} (\`vaultctl vault list\` shows them)`,
  );
}

/**
 * A vault's name as vaultctl shows it: the vouched one (in quotes within a sentence), marked when
 * nothing vouches for it or the server says otherwise.
 */
function shownName(v: CheckedVault, inSentence = true): string {
  const check = v.nameCheck;
  const name = inSentence ? `"${check.name}"` : check.name;
  if (check.status === "verified") return name;
  if (check.status === "unverified") return `${name} (?)`;
  return `${name} (!) the server says "${check.shown}"`;
}

/** What vouches for a user's keys on this machine. */
function trustLine(email: string, trust: TrustLevel | undefined): string {
  if (trust === "invite") return `vouched for by the invite you sent ${email}: nothing to compare`;
  if (trust === "checked") return "you checked it with them and trusted it";
  if (trust === "first-use")
    return `pinned when first seen: compare it with theirs (\`vaultctl keys\` on their machine) over another channel`;
  return "not pinned yet";
}

/** Said of a user who has not signed their id, email and keys (an account not used since statements came). */
function statedLine(user: { email: string; stated: boolean }, before = "\n"): string {
  return user.stated
    ? ""
    : `${before}${user.email} has not signed their email and keys yet (an account not used since this check came): the email is the server's word`;
}

function inviteTrustLine(invite: CheckedInvite): string {
  return invite.verified
    ? `Checked: signed by ${invite.inviter.email}, whose key fingerprint your link names (${invite.inviterFingerprint}).`
    : "Not checked: this is a bare token, not a link from an invite with its inviter's key fingerprint; ask for the whole link to be sure.";
}

async function findItem(client: VaultClient, vaultId: string, ref: string): Promise<Item> {
  const items = await client.listItems(vaultId);
  const byId = items.find((i) => i.itemId === ref.toLowerCase());
  if (byId) return byId;
  const byName = items.filter((i) => i.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) usage(`${byName.length} items are named "${ref}": use an id (${byName.map((i) => i.itemId).join(", ")})`);
  throw new NotFoundError(
    `no item "${ref}" in this vault${didYouMean(
      ref,
      items.map((i) => i.name),
    )}`,
  );
}

function nameOf(report: { members: Array<{ userId: string; email?: string }> }, userId: string): string {
  return report.members.find((m) => m.userId === userId)?.email ?? userId;
}

/** `vaultctl verify FILE`: a saved roster checked with no server, against this machine's pins and seen heads. */
async function verifyOffline(ctx: Context, file: string): Promise<Output> {
  const saved = readSavedRoster(file);
  const state = await verifySavedRoster(saved, ctx.state.pins(saved.server), ctx.state.rosterHeads(saved.server));
  const name = (id: string) => saved.keys[id]?.email ?? id;
  const members = state ? [...state.members].map(([userId, m]) => ({ userId, email: saved.keys[userId]?.email, role: m.role })) : [];
  return {
    json: { ok: true, vaultId: saved.vaultId, name: state?.name ?? null, seq: state?.seq ?? null, head: state?.head ?? null, members },
    // The name the roster signs, not the one the file was saved with (the server's word then).
    text: state
      ? `Saved roster of ${state.name === undefined ? `vault ${saved.vaultId} (no name signed)` : `"${state.name}"`}: OK, ${saved.links.length} links verified offline; members ${members.map((m) => `${name(m.userId)} (${m.role})`).join(", ")}`
      : `Saved roster of vault ${saved.vaultId} is empty.`,
  };
}

async function runRekey(ctx: Context, client: VaultClient, vaultId: string) {
  const bar = progressBar(ctx.progress);
  try {
    return await client.rekey(vaultId, { onProgress: bar });
  } finally {
    bar.end();
  }
}
