/**
 * Files on items: list, attach (read from disk a slice at a time, sealed here in chunks), download
 * (each chunk checked, the file put in place only whole), detach. The SDK part: client.attachments.
 */
import fs from "node:fs";
import path from "node:path";
import { ApiError, printable, SecurityError, sentence, type Item, type VaultClient } from "../../sdk";
import { fileSizeText, MAX_ATTACHMENT_NAME, type ItemAttachment } from "../../sdk/attachments/attachment";
import type { PendingUpload } from "../../sdk/client";
import type { Context } from "../context";
import { byteProgress, fileSource, onInterrupt, saveChecked, type OpenFile } from "../file-io";
import { NotFoundError, table, UsageError, type Output } from "../output";
import { confirmOrStop } from "../password";
import { didYouMean } from "../suggest";
import { findItem } from "./items";
import { type Command, YES_OPTION, findVault, shownName, usage } from "./shared";

/** What `attach` keeps (owner-only, in the state directory) until the file is named in its item: `attach --resume` finishes it. */
interface PendingAttach extends PendingUpload {
  server: string;
  userId: string;
  item: string;
  /** The file, as an absolute path, with the size and modification time it had when the upload began. */
  path: string;
  size: number;
  mtimeMs: number;
}

const WINDOW = "the server deletes an unfinished upload after ATTACHMENT_UPLOAD_WINDOW, 24 h by default";
const RESUME = `\`vaultctl attach --resume\` finishes it (${WINDOW})`;

export const fileCommands: Command[] = [
  {
    path: ["files"],
    args: ["<vault>", "<item>"],
    summary: "An item's files: name, size and id",
    async run(ctx, [vaultRef, itemRef]) {
      const { item } = await itemOf(ctx, vaultRef!, itemRef!);
      const files = item.attachments ?? [];
      return {
        // Never the file key.
        json: files.map((f) => ({ id: f.id, name: f.name, size: f.size, ...(f.type !== undefined && { type: f.type }) })),
        text: table(
          ["ID", "NAME", "SIZE"],
          files.map((f) => [f.id, f.name, fileSizeText(f.size)]),
        ),
      };
    },
  },
  {
    path: ["attach"],
    args: ["<vault?>", "<item?>", "<path?>"],
    summary: `Attach a file to an item, sealed here in chunks (a broken attach: \`attach --resume\`, else attach it again; ${WINDOW})`,
    options: {
      name: { type: "string", value: "NAME", description: "the file's name in the item (default: the file's own)" },
      resume: { type: "boolean", description: "finish the upload a broken `vaultctl attach` began (it takes no arguments)" },
    },
    async run(ctx, [vaultRef, itemRef, file], opts) {
      if (opts.resume) {
        if (vaultRef !== undefined) usage("vaultctl attach --resume takes no arguments: it finishes the upload the last attach began");
        return resumeAttach(ctx);
      }
      if (file === undefined) usage("usage: vaultctl attach <vault> <item> <path> [--name NAME], or vaultctl attach --resume");
      const name = (opts.name as string | undefined) ?? path.basename(file);
      if (name.trim() === "" || [...name].length > MAX_ATTACHMENT_NAME)
        usage(`--name: a file's name is 1 to ${MAX_ATTACHMENT_NAME} characters`);
      const opened = await fileSource(file);
      try {
        const { client, vault, item } = await itemOf(ctx, vaultRef!, itemRef!);
        let begun: PendingAttach | undefined;
        const written = await uploading(
          ctx,
          name,
          opened,
          () => begun !== undefined,
          (progress) =>
            client.attachments.upload(vault.vaultId, item.itemId, name, opened.source, {
              onBegun: (p) => {
                const { size, mtimeMs } = opened;
                begun = {
                  ...p,
                  server: client.http.baseUrl,
                  userId: client.account.userId,
                  item: item.name,
                  path: path.resolve(file),
                  size,
                  mtimeMs,
                };
                ctx.state.savePending("attach", begun);
              },
              onProgress: progress,
            }),
        );
        return attached(ctx, written, begun!.attachment.id);
      } finally {
        await opened.close();
      }
    },
  },
  {
    path: ["download"],
    args: ["<vault>", "<item>", "<file>"],
    summary: "Save an item's file (by name or id), each chunk checked; `-o -` writes it to standard output",
    options: {
      out: {
        type: "string",
        short: "o",
        value: "PATH",
        description: "where to save it (a directory: in it); - for standard output (default: its name, here)",
      },
      force: { type: "boolean", description: "replace a file already at that path" },
    },
    async run(ctx, [vaultRef, itemRef, fileRef], opts) {
      const out = opts.out as string | undefined;
      if (out === "-" && ctx.json) usage("-o - writes the file to standard output: it has no room for --json");
      const { client, vault, item } = await itemOf(ctx, vaultRef!, itemRef!);
      const file = findFile(item, fileRef!);
      const target = out === "-" ? undefined : targetPath(out, file.name);
      if (target !== undefined && !opts.force && fileExists(target)) usage(`${target} exists: --force replaces it`);
      const bar = byteProgress(ctx.progress, `receiving ${printable(file.name)}`);
      let got = 0;
      const fetch = (write: (chunk: Uint8Array) => Promise<void>) =>
        checkedDownload(client, vault.vaultId, file, async (chunk) => {
          await write(chunk);
          bar((got += chunk.length), file.size);
        });
      try {
        if (target === undefined) await fetch(toStdout);
        else await saveChecked(target, opts.force === true, fetch);
      } finally {
        bar.end();
      }
      const json = { itemId: item.itemId, attachmentId: file.id, name: file.name, size: file.size, out: target ?? "-" };
      return { json, text: target === undefined ? "" : `Saved "${printable(file.name)}" (${fileSizeText(file.size)}) to ${target}.` };
    },
  },
  {
    path: ["detach"],
    args: ["<vault>", "<item>", "<file>"],
    summary: "Take a file (by name or id) off an item: a new revision; it is deleted once no kept revision names it",
    options: { yes: YES_OPTION },
    async run(ctx, [vaultRef, itemRef, fileRef], opts) {
      const { client, vault, item } = await itemOf(ctx, vaultRef!, itemRef!);
      const file = findFile(item, fileRef!);
      await confirmOrStop(`Take "${printable(file.name)}" off item "${printable(item.name)}" in ${shownName(vault)}?`, opts.yes === true);
      const written = await client.attachments.remove(vault.vaultId, item.itemId, file.id);
      return {
        json: { itemId: item.itemId, attachmentId: file.id, revision: written.revision },
        text: `Took "${printable(file.name)}" off "${printable(item.name)}" (revision ${written.revision}); its revisions before keep it until they go.`,
      };
    },
  },
];

async function itemOf(ctx: Context, vaultRef: string, itemRef: string) {
  const client = await ctx.unlocked();
  const vault = await findVault(client, vaultRef);
  const item = await findItem(client, vault.vaultId, itemRef);
  return { client, vault, item };
}

/** A file of the item by its id, or by its name when no other file of the item has it. */
function findFile(item: Item, ref: string): ItemAttachment {
  const files = item.attachments ?? [];
  const byId = files.find((f) => f.id === ref.toLowerCase());
  if (byId) return byId;
  const byName = files.filter((f) => f.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1)
    usage(`${byName.length} files of "${printable(item.name)}" are named "${ref}": use an id (${byName.map((f) => f.id).join(", ")})`);
  throw new NotFoundError(
    `no file "${ref}" on item "${printable(item.name)}"${didYouMean(
      ref,
      files.map((f) => f.name),
    )} (\`vaultctl files\` lists them)`,
  );
}

/**
 * Where a download goes: `out` (in it, when it is a directory), else the file's name here. The name
 * is the item's word, and an item is anyone's in the vault to write: only its last part is used
 * (no `../`), and one that is no file name at all needs `-o`.
 */
function targetPath(out: string | undefined, name: string): string {
  const own = () => {
    const base = path
      .basename(name.replace(/\\/g, "/"))
      .split("")
      .filter((c) => c >= " " && c !== "\u007f")
      .join("");
    if (base === "" || base === "." || base === "..") usage(`"${printable(name)}" is no file name to save under: give -o PATH`);
    return base;
  };
  if (out === undefined) return path.resolve(own());
  if (isDirectory(out)) return path.resolve(out, own());
  return path.resolve(out);
}

const isDirectory = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
const fileExists = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;

const toStdout = (chunk: Uint8Array) =>
  new Promise<void>((resolve, reject) => process.stdout.write(chunk, (err) => (err ? reject(err) : resolve())));

/** The download, a refusal said with the sentence people are shown for it (what happened, and that nothing was saved). */
async function checkedDownload(client: VaultClient, vaultId: string, file: ItemAttachment, write: (chunk: Uint8Array) => Promise<void>) {
  try {
    await client.attachments.download(vaultId, file, write);
  } catch (err) {
    if (err instanceof SecurityError && err.code.startsWith("ATTACHMENT_"))
      throw new SecurityError(err.code, `${sentence(err)} (${err.message})`);
    throw err;
  }
}

/**
 * Runs an upload with a progress bar. Once it has begun (`begun()`), Ctrl-C and a failure (a
 * connection that stays broken past the SDK's retries) say how to finish it: the pending upload is
 * in the state directory.
 */
async function uploading(
  ctx: Context,
  name: string,
  opened: OpenFile,
  begun: () => boolean,
  upload: (progress: (sent: number, size: number) => void) => Promise<Item>,
): Promise<Item> {
  const bar = byteProgress(ctx.progress, `sending ${printable(name)}`);
  const stop = onInterrupt(() => {
    bar.end();
    process.stderr.write(begun() ? `\nInterrupted: the upload is kept, ${RESUME}.\n` : "\nInterrupted: nothing was sent.\n");
  });
  try {
    bar(0, opened.size);
    return await upload(bar);
  } catch (err) {
    if (begun() && err instanceof Error) err.message += `. The upload is kept: ${RESUME}`;
    throw err;
  } finally {
    stop();
    bar.end();
  }
}

/** Finishes the upload the last `attach` began, from the same file, unchanged. */
async function resumeAttach(ctx: Context): Promise<Output> {
  const pending = ctx.state.pending<PendingAttach>("attach");
  if (!pending) usage("no upload to resume: `vaultctl attach <vault> <item> <path>` begins one");
  const client = await ctx.unlocked();
  if (pending.server !== client.http.baseUrl || pending.userId !== client.account.userId)
    usage(`the upload to resume was begun on ${pending.server} by another login: log in there to finish it`);
  const opened = await fileSource(pending.path);
  try {
    if (opened.size !== pending.size || opened.mtimeMs !== pending.mtimeMs) {
      ctx.state.forgetPending("attach");
      usage(`${pending.path} changed since its upload began: attach it again (${WINDOW})`);
    }
    const written = await uploading(
      ctx,
      pending.attachment.name,
      opened,
      () => true,
      (progress) =>
        client.attachments.resume(pending, opened.source, { onProgress: progress }).catch((err: unknown) => {
          if (!(err instanceof ApiError && err.status === 404)) throw err;
          ctx.state.forgetPending("attach");
          throw new NotFoundError(`the server no longer holds the upload of ${pending.path} (${WINDOW}): attach it again`);
        }),
    );
    return attached(ctx, written, pending.attachment.id);
  } finally {
    await opened.close();
  }
}

function attached(ctx: Context, written: Item, attachmentId: string): Output {
  ctx.state.forgetPending("attach");
  const file = written.attachments?.find((a) => a.id === attachmentId);
  if (!file) throw new UsageError("the item as written does not name the file: run `vaultctl files` to see what it holds");
  return {
    json: { itemId: written.itemId, attachmentId, name: file.name, size: file.size, revision: written.revision },
    text: `Attached "${printable(file.name)}" (${fileSizeText(file.size)}) to "${printable(written.name)}": ${attachmentId}.`,
  };
}
