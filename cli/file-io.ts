/**
 * Files on disk for `attach` and `download` (cli/commands/files.ts): a file read a slice at a time
 * (never whole in memory), a download written beside its target and put in place only once every
 * chunk checked out, a byte progress bar, and what Ctrl-C does meanwhile.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileSizeText } from "../sdk/attachments/attachment";
import type { RangeReader } from "../sdk/attachments/source";
import { NotFoundError, UsageError } from "./output";

/** A file open for reading by range: its size and modification time when opened (a resume checks both). */
export interface OpenFile {
  source: RangeReader;
  size: number;
  mtimeMs: number;
  close(): Promise<void>;
}

/** `file` opened to be read a slice at a time; a slice that comes short (the file changed meanwhile) is an error. */
export async function fileSource(file: string): Promise<OpenFile> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new NotFoundError(`no file ${file}`);
    throw err;
  }
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw new UsageError(`${file} is not a file`);
  }
  const read = async (offset: number, length: number): Promise<Uint8Array> => {
    const buf = Buffer.alloc(Math.max(0, Math.min(length, stat.size - offset)));
    for (let got = 0; got < buf.length;) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, offset + got);
      if (bytesRead === 0) throw new Error(`${file} became shorter while it was read: attach it again once it no longer changes`);
      got += bytesRead;
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
  };
  return { source: { size: stat.size, read }, size: stat.size, mtimeMs: stat.mtimeMs, close: () => handle.close() };
}

/** Writes all of `chunk` (a write may take part of it). */
async function writeAll(handle: fs.promises.FileHandle, chunk: Uint8Array): Promise<void> {
  for (let at = 0; at < chunk.length;) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten;
}

/**
 * A file written to `target` through a temporary file beside it (owner-only), chunk by chunk as
 * `produce` hands them over: renamed into place once `produce` is done, removed if it throws or the
 * person presses Ctrl-C, so a refused download leaves nothing. Without `force` an existing `target`
 * is kept (the file is linked in, which fails if one appeared meanwhile).
 */
export async function saveChecked(
  target: string,
  force: boolean,
  produce: (write: (chunk: Uint8Array) => Promise<void>) => Promise<unknown>,
): Promise<void> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString("hex")}.part`);
  const handle = await fs.promises.open(temp, "wx", 0o600);
  const gone = () => fs.rmSync(temp, { force: true });
  const stop = onInterrupt(() => {
    gone();
    process.stderr.write("\nInterrupted: nothing was saved.\n");
  });
  try {
    await produce((chunk) => writeAll(handle, chunk));
    await handle.sync();
    await handle.close();
    if (force) fs.renameSync(temp, target);
    else placeNew(temp, target);
  } catch (err) {
    await handle.close().catch(() => undefined);
    gone();
    throw err;
  } finally {
    stop();
  }
}

/** `temp` moved to `target`, never over a file there: a hard link (refused if one exists), else a rename after a look. */
function placeNew(temp: string, target: string): void {
  try {
    fs.linkSync(temp, target);
    fs.rmSync(temp);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new UsageError(`${target} exists: --force replaces it`);
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EXDEV" && code !== "ENOSYS") throw err;
  }
  if (fs.existsSync(target)) throw new UsageError(`${target} exists: --force replaces it`);
  fs.renameSync(temp, target);
}

/**
 * While it is in force, Ctrl-C runs `then` (which says what became of the work) and ends vaultctl
 * with 130, as a shell expects of an interrupted command. Answers the function that lifts it.
 */
export function onInterrupt(then: () => void): () => void {
  const handler = () => {
    then();
    process.exit(130);
  };
  process.once("SIGINT", handler);
  return () => process.off("SIGINT", handler);
}

/**
 * A file's progress on stderr (`what`: "sending passport.pdf"): on a terminal one line redrawn,
 * elsewhere (with `--progress`) a line at every tenth.
 */
export function byteProgress(enabled: boolean, what: string): ((done: number, size: number) => void) & { end(): void } {
  const tty = process.stderr.isTTY === true;
  let lastLine = "";
  let lastTenth = -1;
  const render = (done: number, size: number) => {
    if (!enabled) return;
    const fraction = size === 0 ? 1 : done / size;
    if (tty) {
      const filled = Math.round(fraction * 30);
      const line = `[${"#".repeat(filled)}${".".repeat(30 - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${what} ${fileSizeText(done)} of ${fileSizeText(size)}`;
      if (line !== lastLine) process.stderr.write(`\r${line}\x1b[K`);
      lastLine = line;
      return;
    }
    const tenth = Math.floor(fraction * 10);
    if (tenth !== lastTenth) process.stderr.write(`${what}: ${fileSizeText(done)} of ${fileSizeText(size)} (${tenth * 10}%)\n`);
    lastTenth = tenth;
  };
  return Object.assign(render, {
    end: () => {
      if (enabled && tty && lastLine) process.stderr.write("\n");
    },
  });
}
