/** History and trash commands: an item's kept revisions, one made current again; the vault's trash, restore and purge. */
import { SecurityError, type TrashedItem, type VaultClient } from "../../sdk";
import { NotFoundError, table, UsageError } from "../output";
import { confirmOrStop } from "../password";
import { didYouMean } from "../suggest";
import { findItem } from "./items";
import { type Command, YES_OPTION, findVault, shownName } from "./shared";

export const historyCommands: Command[] = [
  {
    path: ["item", "history"],
    args: ["<vault>", "<item>"],
    summary: "An item's kept revisions, newest first; --revision N shows one",
    options: { revision: { type: "string", value: "N", description: "show this revision's fields" } },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const vaultId = (await findVault(client, vaultRef!)).vaultId;
      const item = await findItem(client, vaultId, itemRef!);
      const revisions = await client.items.history(vaultId, item.itemId);
      if (opts.revision !== undefined) {
        const r = revisions.find((x) => String(x.revision) === opts.revision);
        if (!r)
          throw new NotFoundError(
            `revision ${opts.revision} of "${item.name}" is not kept (kept: ${revisions.map((x) => x.revision).join(", ") || "none"})`,
          );
        const lines = [
          `${r.name}  (revision ${r.revision}, replaced ${r.replacedAt})`,
          ...Object.entries(r.fields).map(([k, v]) => `  ${k}: ${v}`),
        ];
        return { json: r, text: lines.join("\n") };
      }
      const rows = revisions.map((r) => [
        String(r.revision),
        r.name,
        r.createdAt,
        r.replacedAt,
        r.signedBy ?? (r.verified ? "(checked)" : "(before this machine's check)"),
      ]);
      return {
        json: revisions.map(({ fields: _fields, ...r }) => r),
        text:
          revisions.length === 0
            ? `No revisions of "${item.name}" are kept.`
            : table(["REV", "NAME", "WRITTEN", "REPLACED", "SIGNED BY"], rows) + `\nCurrent: revision ${item.revision}.`,
      };
    },
  },
  {
    path: ["item", "revert"],
    args: ["<vault>", "<item>", "<revision>"],
    summary: "Make a kept revision the item's content again (a new revision; the current one is kept)",
    options: {
      unverified: {
        type: "boolean",
        description: "restore a revision written before the signed history this machine checked (which version it is cannot be checked)",
      },
    },
    async run(ctx, [vaultRef, itemRef, revision], opts) {
      const client = await ctx.unlocked();
      const vaultId = (await findVault(client, vaultRef!)).vaultId;
      const item = await findItem(client, vaultId, itemRef!);
      const n = Number(revision);
      if (!Number.isInteger(n) || n < 1) throw new UsageError(`a revision is a positive whole number, not ${revision}`);
      const restored = await client.items
        .restoreRevision(vaultId, item.itemId, n, undefined, { unverified: opts.unverified === true })
        .catch((err: unknown) => {
          if (err instanceof SecurityError && err.code === "REVISION_UNVERIFIED")
            throw new SecurityError(err.code, `${err.message}. To restore it anyway: vaultctl item revert --unverified ...`);
          throw err;
        });
      return { json: restored, text: `"${restored.name}" is as it was at revision ${n} (now revision ${restored.revision}).` };
    },
  },
  {
    path: ["trash", "list"],
    args: ["<vault>"],
    summary: "The vault's trash: deleted items, most recent first",
    async run(ctx, [vaultRef]) {
      const client = await ctx.unlocked();
      const trash = await client.items.trash((await findVault(client, vaultRef!)).vaultId);
      return {
        json: trash.map((t) => ({
          itemId: t.itemId,
          name: t.name,
          revision: t.revision,
          deletedAt: t.deletedAt,
          deletedBy: t.deletedBy,
          verified: t.verified,
        })),
        text:
          trash.length === 0
            ? "The trash is empty."
            : table(
                ["ID", "NAME", "DELETED", "BY"],
                trash.map((t) => [t.itemId, t.name, t.deletedAt, t.deletedBy]),
              ),
      };
    },
  },
  {
    path: ["trash", "restore"],
    args: ["<vault>", "<item>"],
    summary: "Bring an item back out of the trash (by id or name)",
    options: {
      unverified: {
        type: "boolean",
        description: "restore an item deleted before the signed history this machine checked (its copy cannot be checked)",
      },
    },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const vaultId = (await findVault(client, vaultRef!)).vaultId;
      const trashed = await findTrashed(client, vaultId, itemRef!);
      const item = await client.items.restore(vaultId, trashed.itemId, { unverified: opts.unverified === true }).catch((err: unknown) => {
        if (err instanceof SecurityError && err.code === "TRASH_UNVERIFIED")
          throw new SecurityError(err.code, `${err.message}. To restore it anyway: vaultctl trash restore --unverified ...`);
        throw err;
      });
      return { json: item, text: `Restored "${item.name}" (revision ${item.revision}).` };
    },
  },
  {
    path: ["trash", "purge"],
    args: ["<vault>", "<item>"],
    summary: "Delete a trashed item and its history for good",
    options: { yes: YES_OPTION },
    async run(ctx, [vaultRef, itemRef], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const trashed = await findTrashed(client, vault.vaultId, itemRef!);
      await confirmOrStop(`Delete "${trashed.name}" from the trash of ${shownName(vault)} for good, with its history?`, opts.yes === true);
      await client.items.purge(vault.vaultId, trashed.itemId);
      return { json: { purged: trashed.itemId }, text: `Purged "${trashed.name}" for good.` };
    },
  },
];

async function findTrashed(client: VaultClient, vaultId: string, ref: string): Promise<TrashedItem> {
  const trash = await client.items.trash(vaultId);
  const byId = trash.find((t) => t.itemId === ref.toLowerCase());
  if (byId) return byId;
  const byName = trash.filter((t) => t.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1)
    throw new UsageError(`${byName.length} trashed items are named "${ref}": use an id (${byName.map((t) => t.itemId).join(", ")})`);
  throw new NotFoundError(
    `no item "${ref}" in this vault's trash${didYouMean(
      ref,
      trash.map((t) => t.name),
    )}`,
  );
}
