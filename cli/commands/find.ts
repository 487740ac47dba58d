/** Finding items: search across every vault (or one), and an item's current one-time code. */
import type { Item } from "../../sdk";
import { ItemSearch } from "../../sdk/search";
import { totpCode } from "../../sdk/totp";
import { table, UsageError } from "../output";
import { findItem } from "./items";
import { type Command, findVault, listChecked, shownName } from "./shared";

export const findCommands: Command[] = [
  {
    path: ["item", "search"],
    args: ["<words>"],
    summary: "Find items by name, username, website or notes, in every vault you can open (decrypted here)",
    options: { vault: { type: "string", value: "VAULT", description: "search this vault only" } },
    async run(ctx, [words], opts) {
      const client = await ctx.unlocked();
      const vaults = opts.vault ? [await findVault(client, opts.vault)] : await listChecked(client);
      const items: Item[] = [];
      const skipped: string[] = [];
      for (const v of vaults) {
        try {
          items.push(...(await client.items.list(v.vaultId)));
        } catch (err) {
          // One vault that cannot be opened (a rekey due, a refusal) does not hide the others' matches.
          if (opts.vault) throw err;
          skipped.push(`${shownName(v)}: ${(err as Error).message}`);
        }
      }
      const byId = new Map(items.map((i) => [`${i.vaultId}/${i.itemId}`, i]));
      const names = new Map(vaults.map((v) => [v.vaultId, shownName(v, false)]));
      const hits = new ItemSearch(items).search(words!).map((h) => byId.get(`${h.vaultId}/${h.itemId}`)!);
      const rows = hits.map((i) => [names.get(i.vaultId) ?? i.vaultId, i.itemId, i.name, i.fields.username ?? ""]);
      const text = [
        hits.length === 0 ? `No item matches "${words}".` : table(["VAULT", "ID", "NAME", "USERNAME"], rows),
        ...skipped.map((s) => `Not searched: ${s}`),
      ].join("\n");
      return { json: { items: hits.map((i) => ({ vaultId: i.vaultId, itemId: i.itemId, name: i.name, type: i.type })), skipped }, text };
    },
  },
  {
    path: ["item", "totp"],
    args: ["<vault>", "<item>"],
    summary: "An item's current one-time code (TOTP) and the seconds it lasts",
    async run(ctx, [vaultRef, itemRef]) {
      const client = await ctx.unlocked();
      const item = await findItem(client, (await findVault(client, vaultRef!)).vaultId, itemRef!);
      if (!item.totp) throw new UsageError(`item "${item.name}" has no TOTP seed (vaultctl item edit ... --totp SEED)`);
      const { code, remaining } = totpCode(item.totp);
      return { json: { code, remaining }, text: `${code}  (${remaining} s left)` };
    },
  },
];
