/** Every CLI command: what it takes, what it says, and the SDK calls it makes. */
import { DEFAULT_ARGON2ID, DEFAULT_PBKDF2, type Item, type KdfChoice, type Vault, type VaultClient } from "../sdk";
import type { Context } from "./context";
import { EXIT, progressBar, table, UsageError, type Output } from "./output";
import { readPassword } from "./password";

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
  run(ctx: Context, args: string[], opts: Record<string, any>): Promise<Output>;
}

const ROLE_OPTION: OptionSpec = { type: "string", value: "ROLE", description: "member (default) or admin" };

export const commands: Command[] = [
  {
    path: ["register"], args: ["<email>"],
    summary: "Create an account (with an invite token, or as the server's first user) and log in",
    options: {
      invite: { type: "string", value: "TOKEN", description: "the invite token an admin gave you" },
      "org-name": { type: "string", value: "NAME", description: "name of the new organization (first user or open registration)" },
      kdf: { type: "string", value: "KDF", description: "argon2id (default: 3 passes, 64 MiB, 4 lanes) or pbkdf2 (600,000 iterations)" },
    },
    async run(ctx, [email], opts) {
      const kdf: KdfChoice = opts.kdf === undefined || opts.kdf === "argon2id" ? DEFAULT_ARGON2ID
        : opts.kdf === "pbkdf2" ? DEFAULT_PBKDF2 : usage(`--kdf must be argon2id or pbkdf2, not ${opts.kdf}`);
      const client = ctx.anonymous();
      if (opts.invite) {
        const invite = await client.redeemInvite(opts.invite);
        if (invite.email !== email!.trim().toLowerCase()) usage(`this invite is for ${invite.email}, not ${email}`);
      }
      const password = await readPassword(ctx.passwords, "Choose a master password: ", { confirm: true });
      const account = await client.register({ email: email!, password, inviteToken: opts.invite, orgName: opts["org-name"], kdf });
      saveLogin(ctx, client);
      return {
        json: pick(account, "userId", "orgId", "role", "email"),
        text: `Registered and logged in as ${account.email} (${account.role} of organization ${account.orgId}).\nYour user id: ${account.userId}`,
      };
    },
  },
  {
    path: ["login"], args: ["<email>"], summary: "Log in; the tokens are saved (0600), the password is not",
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
    path: ["logout"], args: [], summary: "End the login on the server and forget it here",
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
    path: ["unlock"], args: [], summary: "Check the password once and print a VAULT_SESSION value for scripts",
    options: { raw: { type: "boolean", description: "print the session value only" } },
    async run(ctx, _args, opts) {
      const client = ctx.loggedIn();
      await client.unlock(await readPassword(ctx.passwords, `Master password for ${client.account.email}: `));
      const session = await ctx.createSession(client);
      return {
        json: { session },
        text: opts.raw ? session : `Unlocked. To use it in this shell:\nexport VAULT_SESSION="${session}"\n\`vaultctl lock\` ends every session.`,
      };
    },
  },
  {
    path: ["lock"], args: [], summary: "Forget the unlocked key: every VAULT_SESSION value stops working",
    async run(ctx) {
      ctx.state.forgetUnlocked();
      return { json: { locked: true }, text: "Locked." };
    },
  },
  {
    path: ["whoami"], args: [], summary: "Who is logged in, where",
    async run(ctx) {
      const me = await ctx.loggedIn().me();
      return { json: { ...me, server: ctx.server }, text: `${me.email} (${me.role} of organization ${me.orgId}) on ${ctx.server}\nuser id ${me.userId}` };
    },
  },

  // ---- Vaults ----
  {
    path: ["vault", "list"], args: [], summary: "The vaults you can open",
    async run(ctx) {
      const vaults = await ctx.loggedIn().listVaults();
      return {
        json: vaults.map(vaultSummary),
        text: table(["ID", "NAME", "TYPE", "ROLE", "KEY", "REKEY"], vaults.map((v) => [v.vaultId, v.vaultName, v.vaultType, v.role, `v${v.keyVersion}`, v.rekeyRequired ? "required" : ""])),
      };
    },
  },
  {
    path: ["vault", "create"], args: ["<name>"], summary: "Create a vault (shared unless --personal) with a new random key",
    options: { personal: { type: "boolean", description: "a personal vault: its key wrapped with AES-KW under your stretched key, never shared" } },
    async run(ctx, [name], opts) {
      const vault = await (await ctx.unlocked()).createVault(name!, opts.personal ? "personal" : "shared");
      return { json: vaultSummary(vault), text: `Created ${vault.vaultType} vault "${vault.vaultName}": ${vault.vaultId}` };
    },
  },
  {
    path: ["vault", "rename"], args: ["<vault>", "<name>"], summary: "Rename a vault (owner or admin)",
    async run(ctx, [vaultRef, name]) {
      const client = ctx.loggedIn();
      const vault = await client.renameVault((await findVault(client, vaultRef!)).vaultId, name!);
      return { json: vaultSummary(vault), text: `Renamed to "${vault.vaultName}".` };
    },
  },
  {
    path: ["vault", "delete"], args: ["<vault>"], summary: "Delete a vault with all its items (owner)",
    async run(ctx, [vaultRef]) {
      const client = ctx.loggedIn();
      const vault = await findVault(client, vaultRef!);
      await client.deleteVault(vault.vaultId);
      return { json: { deleted: vault.vaultId }, text: `Deleted vault "${vault.vaultName}".` };
    },
  },
  {
    path: ["vault", "members"], args: ["<vault>"], summary: "A vault's members and who wrapped each one's key",
    async run(ctx, [vaultRef]) {
      const client = ctx.loggedIn();
      const vault = await findVault(client, vaultRef!);
      const [members, org] = await Promise.all([client.members(vault.vaultId), client.orgMembers()]);
      const email = new Map(org.map((m) => [m.userId, m.email]));
      return {
        json: members.map((m) => ({ userId: m.userId, email: email.get(m.userId), role: m.role, senderId: m.senderId })),
        text: table(["USER", "EMAIL", "ROLE", "WRAPPED BY"], members.map((m) => [m.userId, email.get(m.userId) ?? "", m.role, email.get(m.senderId) ?? m.senderId])),
      };
    },
  },
  {
    path: ["vault", "share"], args: ["<vault>", "<user>"], summary: "Wrap the vault key for a user of your organization (email or id) and add them",
    options: { role: ROLE_OPTION },
    async run(ctx, [vaultRef, userRef], opts) {
      const role = parseRole(opts.role);
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const user = await client.findUser(userRef!);
      await client.share(vault.vaultId, user.userId, role);
      const { current } = await client.fingerprint(user.userId);
      return {
        json: { vaultId: vault.vaultId, userId: user.userId, email: user.email, role, fingerprint: current },
        text: `Shared "${vault.vaultName}" with ${user.email} as ${role}.\nTheir key fingerprint: ${current}\n(compare it with theirs, from \`vaultctl keys ${user.email}\`, over another channel)`,
      };
    },
  },
  {
    path: ["vault", "remove"], args: ["<vault>", "<user>"], summary: "Remove a member (or yourself); with --rekey, rekey right after",
    options: { rekey: { type: "boolean", description: "rekey the vault at once when the server asks for it" } },
    async run(ctx, [vaultRef, userRef], opts) {
      const client = ctx.loggedIn();
      const vault = await findVault(client, vaultRef!);
      const user = await client.findUser(userRef!);
      const result = await client.removeMember(vault.vaultId, user.userId);
      const lines = [`Removed ${user.email} from "${vault.vaultName}".`];
      let rekey;
      if (result.rekeyRequired && opts.rekey) {
        rekey = await runRekey(ctx, await ctx.unlocked(), vault.vaultId);
        lines.push(`Rekeyed: key version ${rekey.keyVersion}, ${plural(rekey.items, "item")} re-encrypted, wrapped for ${plural(rekey.members, "member")}.`);
      } else if (result.rekeyRequired) {
        lines.push(`Rekey required: ${user.email} still holds the old key. Run: vaultctl rekey ${vault.vaultId}`);
      }
      return { json: { vaultId: vault.vaultId, removed: user.userId, rekeyRequired: result.rekeyRequired && !rekey, rekey }, text: lines.join("\n") };
    },
  },
  {
    path: ["rekey"], args: ["<vault>"], summary: "New vault key: every item re-encrypted, the key re-wrapped for every member, in one call",
    async run(ctx, [vaultRef]) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const result = await runRekey(ctx, client, vault.vaultId);
      return {
        json: { vaultId: vault.vaultId, ...result },
        text: `Rekeyed "${vault.vaultName}": key version ${result.keyVersion}, ${plural(result.items, "item")} re-encrypted, wrapped for ${plural(result.members, "member")}${result.attempts > 1 ? ` (after ${result.attempts - 1} retries: the vault changed meanwhile)` : ""}.`,
      };
    },
  },
  {
    path: ["verify"], args: ["<vault>"], summary: "Check every member's wrap: signature, signer's role, size, one per member",
    async run(ctx, [vaultRef]) {
      const client = await ctx.unlocked();
      const report = await client.verifyVault((await findVault(client, vaultRef!)).vaultId);
      const lines = [`Vault "${report.vaultName}" (${report.vaultType}, key version ${report.keyVersion}): ${report.ok ? "OK" : "PROBLEMS FOUND"}`];
      for (const m of report.members) {
        const who = `${m.email ?? m.userId} (${m.role})`;
        lines.push(m.ok ? `  ok    ${who}, wrapped by ${nameOf(report, m.senderId)}` : `  FAIL  ${who}: ${m.problems.join("; ")}`);
      }
      for (const p of report.problems) lines.push(`  FAIL  ${p}`);
      for (const w of report.warnings) lines.push(`  note  ${w}`);
      return { json: report, text: lines.join("\n"), exitCode: report.ok ? EXIT.ok : EXIT.security };
    },
  },

  // ---- Items ----
  {
    path: ["item", "list"], args: ["<vault>"], summary: "The vault's items, decrypted (names only)",
    async run(ctx, [vaultRef]) {
      const client = await ctx.unlocked();
      const items = await client.listItems((await findVault(client, vaultRef!)).vaultId);
      return {
        json: items.map((i) => ({ itemId: i.itemId, name: i.name, revision: i.revision, updatedAt: i.updatedAt })),
        text: table(["ID", "NAME", "REV", "UPDATED"], items.map((i) => [i.itemId, i.name, String(i.revision), i.updatedAt])),
      };
    },
  },
  {
    path: ["item", "add"], args: ["<vault>", "<name>"], summary: "Add an item, encrypted on this machine",
    options: {
      field: { type: "string", multiple: true, value: "KEY=VALUE", description: "a field, e.g. username=ana (repeatable)" },
      generate: { type: "boolean", description: "add a random 24-character `password` field" },
    },
    async run(ctx, [vaultRef, name], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const fields = parseFields(opts.field);
      if (opts.generate) fields.password = generatePassword(24);
      const item = await client.addItem(vault.vaultId, { name: name!, fields });
      return { json: itemView(item), text: `Added "${item.name}" to "${vault.vaultName}": ${item.itemId}` };
    },
  },
  {
    path: ["item", "get"], args: ["<vault>", "<item>"], summary: "Show an item (by id or name); --field prints one value only",
    options: { field: { type: "string", value: "KEY", description: "print only this field's value" } },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const item = await findItem(client, (await findVault(client, vaultRef!)).vaultId, itemRef!);
      if (opts.field !== undefined) {
        const value = item.fields[opts.field];
        if (value === undefined) throw new UsageError(`item "${item.name}" has no field ${opts.field}`);
        return { json: { [opts.field]: value }, text: value };
      }
      const lines = [`${item.name}  (${item.itemId}, revision ${item.revision})`, ...Object.entries(item.fields).map(([k, v]) => `  ${k}: ${v}`)];
      return { json: itemView(item), text: lines.join("\n") };
    },
  },
  {
    path: ["item", "edit"], args: ["<vault>", "<item>"], summary: "Change an item's name or fields; refused if someone changed it meanwhile",
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
    path: ["item", "delete"], args: ["<vault>", "<item>"], summary: "Delete an item",
    async run(ctx, [vaultRef, itemRef]) {
      const client = await ctx.unlocked();
      const vaultId = (await findVault(client, vaultRef!)).vaultId;
      const item = await findItem(client, vaultId, itemRef!);
      await client.deleteItem(vaultId, item.itemId);
      return { json: { deleted: item.itemId }, text: `Deleted "${item.name}".` };
    },
  },

  // ---- Invites ----
  {
    path: ["invite", "create"], args: ["<email>"], summary: "Invite someone to your organization (owners and admins); prints the one-time token",
    options: { role: ROLE_OPTION, expires: { type: "string", value: "DURATION", description: "e.g. 24h or 7d (default: the server's, 72h)" } },
    async run(ctx, [email], opts) {
      const invite = await ctx.loggedIn().createInvite(email!, parseRole(opts.role), opts.expires);
      return {
        json: invite,
        text: `Invite ${invite.inviteId} for ${email}, valid until ${invite.expiresAt}.\nToken (shown once; send it privately):\n${invite.token}\nThey run: vaultctl register ${email} --invite <token>`,
      };
    },
  },
  {
    path: ["invite", "list"], args: [], summary: "Pending invites of your organization, newest first",
    async run(ctx) {
      const invites = await ctx.loggedIn().listInvites();
      return { json: invites, text: table(["ID", "EMAIL", "ROLE", "EXPIRES"], invites.map((i) => [i.id, i.email, i.role, i.expiresAt])) };
    },
  },
  {
    path: ["invite", "revoke"], args: ["<inviteId>"], summary: "Revoke a pending invite",
    async run(ctx, [inviteId]) {
      await ctx.loggedIn().revokeInvite(inviteId!);
      return { json: { revoked: inviteId }, text: `Revoked invite ${inviteId}.` };
    },
  },
  {
    path: ["invite", "check"], args: ["<token>"], summary: "What an invite token is for (no login needed; does not use it up)",
    async run(ctx, [token]) {
      const invite = await ctx.anonymous().redeemInvite(token!);
      return { json: invite, text: `Invite for ${invite.email} as ${invite.role} of organization ${invite.orgId}${invite.expiresAt ? `, valid until ${invite.expiresAt}` : ""}.` };
    },
  },

  // ---- Keys ----
  {
    path: ["keys"], args: ["<user?>"], summary: "A user's key fingerprint (yours by default), to compare out of band",
    async run(ctx, [userRef]) {
      const client = ctx.loggedIn();
      const user = userRef ? await client.findUser(userRef) : { userId: client.account.userId, email: client.account.email };
      const { current, pinned } = await client.fingerprint(user.userId);
      const status = pinned === undefined ? "not pinned yet" : pinned === current ? "matches the pinned key" : `CHANGED: pinned ${pinned}`;
      return { json: { userId: user.userId, email: user.email, fingerprint: current, pinned: pinned ?? null }, text: `${user.email}\n  ${current}\n  ${status}` };
    },
  },
  {
    path: ["trust"], args: ["<user>", "<fingerprint>"], summary: "Accept a user's changed keys after checking the new fingerprint with them",
    async run(ctx, [userRef, fingerprint]) {
      const client = ctx.loggedIn();
      const user = await client.findUser(userRef!);
      const normalized = fingerprint!.replace(/\s+/g, "").toLowerCase().match(/.{1,4}/g)?.join(" ") ?? "";
      await client.trustUser(user.userId, normalized);
      return { json: { userId: user.userId, fingerprint: normalized }, text: `Pinned ${user.email}: ${normalized}` };
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

function parseRole(role: string | undefined): "admin" | "member" {
  if (role === undefined || role === "member") return "member";
  if (role === "admin") return "admin";
  return usage(`--role must be member or admin, not ${role}`);
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

const PASSWORD_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_.!@#%+=";

/** Uniform over the alphabet: bytes at or above the largest multiple of its size are drawn again. */
function generatePassword(length: number): string {
  const limit = 256 - (256 % PASSWORD_ALPHABET.length);
  let out = "";
  while (out.length < length) {
    for (const byte of globalThis.crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += PASSWORD_ALPHABET[byte % PASSWORD_ALPHABET.length];
    }
  }
  return out;
}

/** A vault by id, or by its exact name when that is unique among the caller's vaults. */
async function findVault(client: VaultClient, ref: string): Promise<Vault> {
  const vaults = await client.listVaults();
  const byId = vaults.find((v) => v.vaultId === ref.toLowerCase());
  if (byId) return byId;
  const byName = vaults.filter((v) => v.vaultName === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) usage(`${byName.length} vaults are named "${ref}": use an id (${byName.map((v) => v.vaultId).join(", ")})`);
  return usage(`no vault "${ref}" among yours (\`vaultctl vault list\` shows them)`);
}

async function findItem(client: VaultClient, vaultId: string, ref: string): Promise<Item> {
  const items = await client.listItems(vaultId);
  const byId = items.find((i) => i.itemId === ref.toLowerCase());
  if (byId) return byId;
  const byName = items.filter((i) => i.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) usage(`${byName.length} items are named "${ref}": use an id (${byName.map((i) => i.itemId).join(", ")})`);
  return usage(`no item "${ref}" in this vault`);
}

function nameOf(report: { members: Array<{ userId: string; email?: string }> }, userId: string): string {
  return report.members.find((m) => m.userId === userId)?.email ?? userId;
}

async function runRekey(ctx: Context, client: VaultClient, vaultId: string) {
  const bar = progressBar(ctx.progress);
  try {
    return await client.rekey(vaultId, { onProgress: bar });
  } finally {
    bar.end();
  }
}
