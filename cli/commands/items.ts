/** Item commands: list, add, get, edit, delete. */
import {
  completeItemUrl,
  generatePassword,
  ITEM_TYPES,
  itemUrls,
  URL_MATCHES,
  type CustomField,
  type Item,
  type ItemContent,
  type ItemType,
  type UrlMatch,
  type VaultClient,
} from "../../sdk";
import { totpCode, totpProblem } from "../../sdk/totp";
import { NotFoundError, table, UsageError } from "../output";
import { confirmOrStop } from "../password";
import { didYouMean } from "../suggest";
import { type Command, YES_OPTION, usage, pick, findVault, shownName } from "./shared";

/** The options `item add` and `item edit` share for what a type holds beyond its fields. */
const TYPED_OPTIONS = {
  url: { type: "string", multiple: true, value: "URL", description: "a website (repeatable; replaces the item's websites)" },
  "url-match": { type: "string", value: "RULE", description: `how the websites match: ${URL_MATCHES.join(", ")} (default domain)` },
  totp: { type: "string", value: "SEED", description: "a TOTP seed: an otpauth:// address or a base32 secret" },
  custom: { type: "string", multiple: true, value: "NAME=VALUE", description: "a custom field (repeatable)" },
  hidden: { type: "string", multiple: true, value: "NAME=VALUE", description: "a custom field shown masked (repeatable)" },
  favorite: { type: "boolean", description: "mark it a favourite" },
} as const;

export const itemCommands: Command[] = [
  {
    path: ["item", "list"],
    args: ["<vault>"],
    summary: "The vault's items, decrypted (names only)",
    async run(ctx, [vaultRef]) {
      const client = await ctx.unlocked();
      const items = await client.items.list((await findVault(client, vaultRef!)).vaultId);
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
      type: { type: "string", value: "TYPE", description: `${ITEM_TYPES.join(", ")} (default login)` },
      field: { type: "string", multiple: true, value: "KEY=VALUE", description: "a field, e.g. username=ana (repeatable)" },
      ...TYPED_OPTIONS,
      generate: { type: "boolean", description: "add a random 24-character `password` field" },
      show: { type: "boolean", description: "with --generate: print the generated password" },
    },
    async run(ctx, [vaultRef, name], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const fields = parseFields(opts.field);
      if (opts.generate) fields.password = generatePassword(24);
      const item = await client.items.add(vault.vaultId, typed({ name: name!, fields, type: parseType(opts.type) }, opts));
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
        `${item.favorite ? "★ " : ""}${item.name}  (${item.type}, ${item.itemId}, revision ${item.revision})`,
        ...Object.entries(item.fields)
          .filter(([k]) => !(k === "url" && !item.urls))
          .map(([k, v]) => `  ${k}: ${v}`),
        ...itemUrls(item).map((u) => `  website: ${u.url}${u.match === "domain" ? "" : ` (match: ${u.match})`}`),
        ...(item.custom ?? []).map((c) => `  ${c.name}: ${c.value}${c.hidden ? " (hidden)" : ""}`),
        ...(item.totp ? [totpLine(item.totp)] : []),
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
      ...TYPED_OPTIONS,
      generate: { type: "boolean", description: "set `password` to a new random 24-character value" },
    },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const vaultId = (await findVault(client, vaultRef!)).vaultId;
      const item = await findItem(client, vaultId, itemRef!);
      const fields = { ...item.fields, ...parseFields(opts.field) };
      for (const key of opts["remove-field"] ?? []) delete fields[key];
      if (opts.generate) fields.password = generatePassword(24);
      const { itemId: _i, vaultId: _v, revision, createdAt: _c, updatedAt: _u, ...content } = item;
      const edited = await client.items.edit(vaultId, item.itemId, typed({ ...content, name: opts.name ?? item.name, fields }, opts), {
        revision,
      });
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
      await client.items.delete(vaultId, item.itemId);
      return {
        json: { deleted: item.itemId, trash: true },
        text: `Deleted "${item.name}": it is in the vault's trash (vaultctl trash restore ${vaultId} ${item.itemId}).`,
      };
    },
  },

  // ---- Invites ----
];

function itemView(i: Item) {
  return pick(i, "itemId", "vaultId", "name", "type", "fields", "urls", "custom", "favorite", "revision", "createdAt", "updatedAt");
}

function parseType(raw: string | undefined): ItemType {
  if (raw === undefined) return "login";
  if (!ITEM_TYPES.includes(raw as ItemType)) usage(`--type is one of ${ITEM_TYPES.join(", ")}, not ${raw}`);
  return raw as ItemType;
}

/** The content with what the options give: websites (completed with https://), a TOTP seed that parses, custom fields, the favourite mark. */
function typed(content: ItemContent, opts: Record<string, unknown>): ItemContent {
  const out = { ...content };
  const urls = opts.url as string[] | undefined;
  if (urls && urls.length > 0) {
    const match = (opts["url-match"] as string | undefined) ?? "domain";
    if (!URL_MATCHES.includes(match as UrlMatch)) usage(`--url-match is one of ${URL_MATCHES.join(", ")}, not ${match}`);
    out.urls = urls.map((u) => ({ url: completeItemUrl(u) ?? u, match: match as UrlMatch }));
    delete out.fields.url;
  }
  if (typeof opts.totp === "string") {
    const problem = totpProblem(opts.totp);
    if (problem) usage(`--totp: ${problem}`);
    out.totp = opts.totp.trim();
  }
  const custom: CustomField[] = [
    ...Object.entries(parseFields(opts.custom as string[] | undefined)).map(([name, value]) => ({ name, value, hidden: false })),
    ...Object.entries(parseFields(opts.hidden as string[] | undefined)).map(([name, value]) => ({ name, value, hidden: true })),
  ];
  if (custom.length > 0) out.custom = [...(content.custom ?? []).filter((c) => !custom.some((n) => n.name === c.name)), ...custom];
  if (opts.favorite === true) out.favorite = true;
  return out;
}

export function totpLine(seed: string): string {
  try {
    const { code, remaining } = totpCode(seed);
    return `  one-time code: ${code} (${remaining} s left)`;
  } catch (err) {
    return `  one-time code: the seed does not parse (${(err as Error).message})`;
  }
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
  const items = await client.items.list(vaultId);
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
