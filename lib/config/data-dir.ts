/**
 * DATA_DIR made ready before anything is written to it: created owner-only (0700) where it is
 * missing, and proved writable by writing to it. Every way it can be wrong (a file, a path under a
 * file, a file system that takes no folders or no writes, no permission) fails at once, in one
 * sentence naming the setting, the path and the reason: never a raw errno, and never a hang. Node's
 * own recursive mkdir loops forever on a path under /proc, where mkdir answers ENOENT although the
 * parent exists; so the folders are made here one level at a time.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";

/** What an errno means for a folder to be made or written in, said plainly. */
const REASONS: Record<string, string> = {
  EACCES: "this process may not write there (permission denied)",
  EPERM: "this process may not write there (operation not permitted)",
  EROFS: "its file system is read-only",
  ENOENT: "its file system takes no new folders or files (is it under /proc or /sys?)",
  ENOTDIR: "a part of the path is a file, not a folder",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  ELOOP: "its symbolic links loop",
  ENAMETOOLONG: "the path is too long",
};

/** The sentence a bad DATA_DIR fails with. */
function badDataDir(dir: string, reason: string): Error {
  return new Error(`Setting DATA_DIR (${dir}) cannot be used: ${reason}; point DATA_DIR at a folder this process may write`);
}

function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  return REASONS[code] ?? `${code || (err as Error).message}`;
}

/** Makes `dataDir` (and any missing parent) owner-only, and proves it writable; throws one sentence otherwise. */
export function ensureDataDir(dataDir: string): void {
  const dir = path.resolve(dataDir);
  ensureFolder(dir, (reason) => badDataDir(dir, reason));
}

/**
 * Makes the folder `dir` (and any missing parent) owner-only (0700), and proves it writable;
 * otherwise throws what `refuse` makes of the reason (a sentence fragment).
 */
export function ensureFolder(dir: string, refuse: (reason: string) => Error): void {
  const missing: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    const st = statOr(at, refuse);
    if (st?.isDirectory()) break;
    if (st) throw refuse(at === dir ? "it is a file, not a folder" : `${at} is a file, not a folder`);
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const folder of missing) makeFolder(folder, refuse);
  proveWritable(dir, refuse);
}

/** `at`'s status, or null when it does not exist. */
function statOr(at: string, refuse: (reason: string) => Error): fs.Stats | null {
  try {
    return fs.statSync(at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw refuse(reasonOf(err));
  }
}

function makeFolder(folder: string, refuse: (reason: string) => Error): void {
  try {
    fs.mkdirSync(folder, { mode: 0o700 });
  } catch (err) {
    // Another process starting on the same DATA_DIR made it meanwhile.
    if ((err as NodeJS.ErrnoException).code === "EEXIST" && fs.statSync(folder).isDirectory()) return;
    throw refuse(`${folder} cannot be made: ${reasonOf(err)}`);
  }
}

/** Writes and removes a small file: the one test that also holds for root, read-only mounts and /proc. */
function proveWritable(dir: string, refuse: (reason: string) => Error): void {
  const probe = path.join(dir, `.write-probe-${randomBytes(6).toString("hex")}`);
  try {
    fs.closeSync(fs.openSync(probe, "wx", 0o600));
  } catch (err) {
    throw refuse(reasonOf(err));
  }
  fs.rmSync(probe, { force: true });
}

/** Flushes a file or a folder (its entries: a rename or a new file in it) to disk before going on. */
export function fsyncPathSync(file: string): void {
  const fd = fs.openSync(file, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
