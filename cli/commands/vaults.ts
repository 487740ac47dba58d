/** Vault commands: list, create, rename, delete, members, share, remove, rekey and adopt. */
import { VAULT_ROLES, type Vault, type VaultClient, type VaultRole } from "../../sdk";
import type { Context } from "../context";
import { progressBar, table } from "../output";
import { confirmOrStop } from "../password";
import {
  type Command,
  ROLE_OPTION,
  YES_OPTION,
  plural,
  pick,
  parseRole,
  findUser,
  findVault,
  listChecked,
  shownName,
  trustLine,
  statedLine,
} from "./shared";

/** `--member USER[:ROLE]`: a user (email or id), and optionally one of the vault roles. */
const MEMBER_ARG = new RegExp(`^(.*?)(?::(${VAULT_ROLES.join("|")}))?$`);

export const vaultsCommands: Command[] = [
  {
    path: ["vault", "list"],
    args: [],
    summary: "The vaults you can open, each name checked against the vault's signed roster",
    async run(ctx) {
      const vaults = await listChecked(ctx.loggedIn());
      return {
        json: vaults.map((v) => ({
          ...vaultSummary(v),
          vaultName: v.nameCheck.name,
          nameCheck: v.nameCheck,
          ...pick(v, "namedBy", "createdBy", "owners"),
        })),
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
    path: ["vault", "forget"],
    args: ["<vault-id...>"],
    summary: "Confirm that vaults this machine knew, which the server no longer lists, are gone (deleted, or you were removed)",
    options: { yes: YES_OPTION },
    async run(ctx, ids, opts) {
      const client = ctx.loggedIn();
      await confirmOrStop(
        `Forget ${plural(ids.length, "vault")} (${ids.join(", ")}) on this machine? Only if you know ${ids.length === 1 ? "it is" : "they are"} gone: a server that hides a vault is what this check catches`,
        opts.yes === true,
      );
      await client.vaults.forget(ids);
      return {
        json: { forgotten: ids.map((id) => id.toLowerCase()) },
        text: `Forgot ${plural(ids.length, "vault")}: their names are free for other vaults.`,
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
      const vault = await (await ctx.unlocked()).vaults.create(name!, opts.personal ? "personal" : "shared");
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
      const vault = await client.vaults.rename((await findVault(client, vaultRef!)).vaultId, name!);
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
      await client.vaults.delete(vault.vaultId);
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
      const [{ members, roster }, org] = await Promise.all([client.members.verified(vault.vaultId), client.people.list()]);
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
      await client.members.share(vault.vaultId, user.userId, role);
      const { current, trust } = await client.keys.fingerprint(user.userId);
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
      const result = await client.members.remove(vault.vaultId, user.userId);
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
      if (user.userId !== client.account.userId)
        lines.push(`What ${user.email} could read, to change: vaultctl exposure ${vault.vaultId} ${user.email}`);
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
      const listed = await client.members.list(vault.vaultId);
      const org = await client.people.list();
      const emailOf = (id: string) =>
        org.find((m) => m.userId === id && !m.problem)?.email ?? `user ${id} (keys or identity do not check out)`;
      let members: Array<{ userId: string; role: VaultRole }>;
      let name: string | undefined = opts.name;
      if (opts.member?.length) {
        members = [];
        for (const given of opts.member as string[]) {
          const [, ref, named] = MEMBER_ARG.exec(given)!;
          const userId = (await findUser(client, ref!)).userId;
          const role = VAULT_ROLES.find((r) => r === named) ?? (userId === client.account.userId ? "owner" : "member");
          members.push({ userId, role });
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
        roster = await client.members.adoptRoster(vault.vaultId, { members, name }, { onProgress: bar });
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
];

function vaultSummary(v: Vault) {
  return pick(v, "vaultId", "vaultName", "vaultType", "role", "keyVersion", "rekeyRequired", "orgId", "createdAt", "updatedAt");
}

async function runRekey(ctx: Context, client: VaultClient, vaultId: string) {
  const bar = progressBar(ctx.progress);
  try {
    return await client.vaults.rekey(vaultId, { onProgress: bar });
  } finally {
    bar.end();
  }
}
