/** Item commands: list, add, get, edit, delete. */
import { generatePassword, type Item, type VaultClient } from "../../sdk";
import { NotFoundError, table, UsageError } from "../output";
import { confirmOrStop } from "../password";
import { didYouMean } from "../suggest";
import { type Command, YES_OPTION, usage, pick, findVault, shownName } from "./shared";

export const itemCommands: Command[] = [
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
    summary: "Move an item to the vault's trash (`vaultctl trash restore` brings it back)",
    options: { yes: YES_OPTION },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const vaultId = vault.vaultId;
      const item = await findItem(client, vaultId, itemRef!);
      await confirmOrStop(`Delete item "${item.name}" from vault ${shownName(vault)}?`, opts.yes === true);
      await client.deleteItem(vaultId, item.itemId);
      return {
        json: { deleted: item.itemId, trash: true },
        text: `Deleted "${item.name}": it is in the vault's trash (vaultctl trash restore ${vaultId} ${item.itemId}).`,
      };
    },
  },

  // ---- Invites ----
];

function itemView(i: Item) {
  return pick(i, "itemId", "vaultId", "name", "fields", "revision", "createdAt", "updatedAt");
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

export async function findItem(client: VaultClient, vaultId: string, ref: string): Promise<Item> {
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
