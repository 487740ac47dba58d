/**
 * The embedded store's attachment chunks as files (lib/store/sql/attachments.ts): chunk `index` of
 * attachment `id` is `<chunkDir>/<id>/<index>`, its row's `data` null. A chunk is written to a
 * temporary name and fsynced before its transaction, moved into place (and its folder fsynced) in
 * the transaction once the rules took it and before its row is written: a row always has its file.
 * Folders of deleted attachments are removed once their transaction has committed; one left by a
 * crash in between has no row, and the sweeper removes it (`foldersChangedBefore`). A chunk written
 * while its upload was deleted removes the folder it may have made again (lib/store/sql/attachments.ts).
 *
 * A backup carries the chunks in its rows (`fillBackupChunks`); a restore writes them out as files
 * again (`writeOutBackupChunks`). Folders and files are owner-only (0700, 0600). A path is only
 * ever made of a lower-case UUID and an index, both checked here again.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { UUID } from "../../domain/ids";
import { ensureFolder, fsyncPathSync } from "../../config/data-dir";

/** The chunk files' folder under DATA_DIR. */
export const ATTACHMENTS_FOLDER = "attachments";

const isAttachmentId = (name: string): boolean => UUID.test(name) && name === name.toLowerCase();

function folderOf(dir: string, id: string): string {
  if (!isAttachmentId(id)) throw new Error(`Not an attachment id: ${JSON.stringify(id)}`);
  return path.join(dir, id);
}

function fileOf(dir: string, id: string, index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new Error(`Not a chunk index: ${index}`);
  return path.join(folderOf(dir, id), String(index));
}

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === "ENOENT";

async function fsyncFolder(folder: string): Promise<void> {
  const fh = await fs.promises.open(folder, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A chunk written to a temporary file: `place` moves it into place (in the transaction), `discard` drops it (refused, or failed). */
export interface StagedChunk {
  place(): Promise<void>;
  discard(): Promise<void>;
}

export class ChunkFiles {
  /** Makes `dir` (owner-only) where it is missing; throws a sentence when it cannot be used. */
  constructor(readonly dir: string) {
    ensureFolder(dir, (reason) => new Error(`The attachments folder ${dir} cannot be used: ${reason}`));
  }

  /** Writes a chunk to a new temporary file in its attachment's folder, and fsyncs it. */
  async stage(id: string, index: number, data: Uint8Array): Promise<StagedChunk> {
    const folder = folderOf(this.dir, id);
    const target = fileOf(this.dir, id, index);
    await this.makeFolder(folder);
    const temp = path.join(folder, `.${index}.${randomBytes(6).toString("hex")}.tmp`);
    const discard = () => fs.promises.rm(temp, { force: true }).catch(() => undefined);
    try {
      const fh = await fs.promises.open(temp, "wx", 0o600);
      try {
        await fh.writeFile(data);
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      await discard();
      throw err;
    }
    return {
      place: async () => {
        await fs.promises.rename(temp, target);
        await fsyncFolder(folder);
      },
      discard,
    };
  }

  private async makeFolder(folder: string): Promise<void> {
    try {
      await fs.promises.mkdir(folder, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
      throw err;
    }
    await fsyncFolder(this.dir);
  }

  /** A chunk's bytes; undefined when its file is not there (its attachment deleted meanwhile). */
  async read(id: string, index: number): Promise<Uint8Array | undefined> {
    try {
      return await fs.promises.readFile(fileOf(this.dir, id, index));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /**
   * Removes attachments' folders, once the transaction that deleted their rows has committed. A
   * failure is not the request's: the folder, without a row, is the sweeper's to remove.
   */
  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) await fs.promises.rm(folderOf(this.dir, id), { recursive: true, force: true }).catch(() => undefined);
  }

  /** The attachments that have a folder, last changed before `beforeMs` (an upload going on changes its folder). */
  async foldersChangedBefore(beforeMs: number): Promise<string[]> {
    const found: string[] = [];
    for (const entry of await fs.promises.readdir(this.dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || !isAttachmentId(entry.name)) continue;
      try {
        if ((await fs.promises.stat(path.join(this.dir, entry.name))).mtimeMs < beforeMs) found.push(entry.name);
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
    return found;
  }
}

function hasChunkTable(db: DatabaseSync): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'attachment_chunks'").get() !== undefined;
}

/**
 * Fills a backup's chunk rows (a copy of the database made at one point in time) with their files'
 * bytes, read while the store goes on serving. Every row of the copy had its file when the copy
 * was made (a file is in place before its row is written); a file gone since (its attachment
 * deleted meanwhile) or of another size takes its attachment out of the backup, whole.
 */
export async function fillBackupChunks(file: string, files: ChunkFiles): Promise<void> {
  const db = new DatabaseSync(file);
  try {
    if (!hasChunkTable(db)) return;
    const ids = db.prepare("SELECT DISTINCT attachment_id AS id FROM attachment_chunks").all() as Array<{ id: string }>;
    const chunksOf = db.prepare("SELECT idx, sealed_bytes FROM attachment_chunks WHERE attachment_id = ? ORDER BY idx");
    const fill = db.prepare("UPDATE attachment_chunks SET data = ? WHERE attachment_id = ? AND idx = ?");
    const drop = [
      db.prepare("DELETE FROM attachment_chunks WHERE attachment_id = ?"),
      db.prepare("DELETE FROM attachments WHERE attachment_id = ?"),
    ];
    db.exec("BEGIN");
    for (const { id } of ids) {
      const rows = chunksOf.all(id) as Array<{ idx: number; sealed_bytes: number }>;
      const read: Array<[number, Uint8Array]> = [];
      for (const r of rows) {
        const bytes = await files.read(id, Number(r.idx));
        if (!bytes || bytes.length !== Number(r.sealed_bytes)) break;
        read.push([Number(r.idx), bytes]);
      }
      if (read.length === rows.length) for (const [idx, bytes] of read) fill.run(bytes, id, idx);
      else for (const statement of drop) statement.run(id);
    }
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/**
 * A restore's half (lib/ops/backup.ts): writes the chunks a backup carries out as files under
 * `chunkDir` (a new folder, put in place by the caller) and empties their rows, then compacts
 * the file. The restore runs offline: synchronous.
 */
export function writeOutBackupChunks(file: string, chunkDir: string): void {
  const db = new DatabaseSync(file);
  try {
    if (!hasChunkTable(db)) return;
    fs.mkdirSync(chunkDir, { mode: 0o700 });
    const ids = db.prepare("SELECT DISTINCT attachment_id AS id FROM attachment_chunks").all() as Array<{ id: string }>;
    const chunksOf = db.prepare("SELECT idx, data FROM attachment_chunks WHERE attachment_id = ?");
    for (const { id } of ids) {
      const folder = folderOf(chunkDir, id);
      fs.mkdirSync(folder, { mode: 0o700 });
      for (const row of chunksOf.iterate(id) as Iterable<{ idx: number; data: Uint8Array | null }>) {
        if (row.data === null) throw new Error(`The backup lacks the bytes of chunk ${row.idx} of attachment ${id}: not a complete backup`);
        const fd = fs.openSync(fileOf(chunkDir, id, Number(row.idx)), "wx", 0o600);
        try {
          fs.writeFileSync(fd, row.data);
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      }
      fsyncPathSync(folder);
    }
    fsyncPathSync(chunkDir);
    db.exec("UPDATE attachment_chunks SET data = NULL");
    db.exec("VACUUM");
  } finally {
    db.close();
  }
}
