/**
 * A backup of the embedded store carries its attachments' chunk files, and a restore puts them
 * back: every file byte for byte, owner-only, and the restored store reads every attachment (whole
 * or in progress) as before. A file deleted between the database's copy and its read takes its
 * attachment out of the backup, whole. Run with the functions `admin backup` and `admin restore`
 * call (lib/ops/backup.ts), on stores opened as the server opens them.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { restoreBackup, writeBackup } from "../../lib/ops/backup";
import { openSqlStore } from "../../lib/store/sql/store";
import { openSqlite, sqliteOps, STORE_FILE } from "../../lib/store/sql/sqlite";
import { ATTACHMENTS_FOLDER, ChunkFiles, fillBackupChunks } from "../../lib/store/sql/attachment-files";
import type { Store } from "../../lib/store/port";
import { ATTACHMENT_CHUNK_BYTES } from "../../protocol/formats/attachments";
import { digest, openFile, ownerWithItem, sealFile, type SealedFile } from "../helpers/sealed-files";
import { tempDir } from "../helpers/server";

const LIMITS = { maxFileBytes: 1 << 30, perItem: 50, orgQuotaBytes: 2 ** 40 };
const at = () => new Date().toISOString();

/** The embedded store on `dataDir`, as lib/store/index.ts opens it. */
const openEmbedded = (dataDir: string) =>
  openSqlStore(openSqlite(dataDir), sqliteOps, { chunkDir: path.join(dataDir, ATTACHMENTS_FOLDER) });

/** Every chunk file under DATA_DIR/attachments: its path there, its SHA-256 and its mode. */
function chunkFiles(dataDir: string): Array<[string, string, string]> {
  const root = path.join(dataDir, ATTACHMENTS_FOLDER);
  return fs
    .readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((rel) => fs.statSync(path.join(root, rel)).isFile() && !path.basename(rel).startsWith("."))
    .sort()
    .map((rel) => {
      const file = path.join(root, rel);
      return [rel, digest(fs.readFileSync(file)), (fs.statSync(file).mode & 0o777).toString(8)];
    });
}

type Place = Awaited<ReturnType<typeof ownerWithItem>>;

async function send(store: Store, at0: Place, f: SealedFile, chunks: number[], finish: boolean): Promise<void> {
  const { vaultId, userId: actorId, itemId } = at0;
  await store.attachments.beginUpload({ vaultId, actorId, itemId, attachmentId: f.attachmentId, size: f.size, limits: LIMITS, now: at() });
  for (const index of chunks)
    await store.attachments.putChunk({ vaultId, actorId, attachmentId: f.attachmentId, index, data: f.chunks[index]! });
  if (finish) await store.attachments.finishUpload({ vaultId, actorId, attachmentId: f.attachmentId, now: at() });
}

async function readBack(store: Store, p: Place, f: SealedFile): Promise<string> {
  const sealed: Uint8Array[] = [];
  for (let index = 0; index < f.chunks.length; index++)
    sealed.push(await store.attachments.readChunk({ vaultId: p.vaultId, actorId: p.userId, attachmentId: f.attachmentId, index }));
  return digest(await openFile(f, sealed));
}

test("a backup carries every chunk file, and a restore writes each back byte for byte, owner-only; the restored store reads them all", async () => {
  const dataDir = tempDir();
  const store = await openEmbedded(dataDir);
  const p = await ownerWithItem(store);
  const [whole, empty, partial, deleted] = await Promise.all([
    sealFile(2 * ATTACHMENT_CHUNK_BYTES + 77),
    sealFile(0),
    sealFile(3 * ATTACHMENT_CHUNK_BYTES + 1),
    sealFile(10),
  ]);
  await send(store, p, whole!, [0, 1, 2], true);
  await send(store, p, empty!, [0], true);
  await send(store, p, partial!, [3, 1], false);
  await send(store, p, deleted!, [0], true);
  await store.attachments.deleteAttachment({ vaultId: p.vaultId, actorId: p.userId, attachmentId: deleted!.attachmentId });
  const file = path.join(tempDir("vault-backup-"), "vault.backup");
  await writeBackup(store, file, { key: randomBytes(32), generated: true });
  const before = chunkFiles(dataDir);
  expect(before.map(([rel]) => rel)).toEqual(
    [
      ...[0, 1, 2].map((i) => `${whole!.attachmentId}/${i}`),
      `${empty!.attachmentId}/0`,
      ...[1, 3].map((i) => `${partial!.attachmentId}/${i}`),
    ].sort(),
  );
  // After the backup: a new file, which the restore over this store must not keep.
  const later = await sealFile(5);
  await send(store, p, later, [0], true);
  await store.close();

  const fresh = tempDir();
  restoreBackup(file, fresh, { force: false, withoutSealKey: false, keys: {} });
  expect(chunkFiles(fresh)).toEqual(before);
  expect(before.every(([, , mode]) => mode === "600")).toBe(true);
  const root = path.join(fresh, ATTACHMENTS_FOLDER);
  for (const folder of [root, ...fs.readdirSync(root).map((id) => path.join(root, id))])
    expect([folder, fs.statSync(folder).mode & 0o777]).toEqual([folder, 0o700]);
  // The bytes are in the files only, not also in the restored database.
  const db = new DatabaseSync(path.join(fresh, STORE_FILE), { readOnly: true });
  try {
    expect(db.prepare("SELECT count(*) AS n FROM attachment_chunks WHERE data IS NOT NULL").get()).toEqual({ n: 0 });
  } finally {
    db.close();
  }
  const restored = await openEmbedded(fresh);
  try {
    for (const f of [whole!, empty!]) expect(await readBack(restored, p, f)).toBe(digest(f.plain));
    expect(
      await restored.attachments.getAttachment({ vaultId: p.vaultId, actorId: p.userId, attachmentId: partial!.attachmentId }),
    ).toMatchObject({ complete: false, received: [1, 3] });
  } finally {
    await restored.close();
  }

  // Over the store it was made of (--force): the files are the backup's, the later one's gone.
  restoreBackup(file, dataDir, { force: true, withoutSealKey: false, keys: {} });
  expect(chunkFiles(dataDir)).toEqual(before);
});

test("a chunk file deleted between the database's copy and its read takes its attachment out of the backup, whole", async () => {
  const dataDir = tempDir();
  const db = openSqlite(dataDir);
  const chunkDir = path.join(dataDir, ATTACHMENTS_FOLDER);
  const store = await openSqlStore(db, sqliteOps, { chunkDir });
  try {
    const p = await ownerWithItem(store);
    const [gone, kept] = await Promise.all([sealFile(ATTACHMENT_CHUNK_BYTES + 1), sealFile(ATTACHMENT_CHUNK_BYTES + 2)]);
    await send(store, p, gone!, [0, 1], true);
    await send(store, p, kept!, [0, 1], true);
    const file = path.join(tempDir("vault-backup-"), "copy.sqlite");
    // The copy (the first half of `backupTo`), then the delete, then the files read into the copy.
    await sqliteOps.backupTo(db, file);
    await store.attachments.deleteAttachment({ vaultId: p.vaultId, actorId: p.userId, attachmentId: gone!.attachmentId });
    await fillBackupChunks(file, new ChunkFiles(chunkDir));
    const copy = new DatabaseSync(file, { readOnly: true });
    try {
      expect(
        copy
          .prepare("SELECT attachment_id AS id FROM attachments")
          .all()
          .map((r) => r.id),
      ).toEqual([kept!.attachmentId]);
      const rows = copy.prepare("SELECT attachment_id AS id, idx, data FROM attachment_chunks ORDER BY idx").all() as Array<{
        id: string;
        idx: number;
        data: Uint8Array;
      }>;
      expect(rows.map((r) => [r.id, r.idx, digest(r.data)])).toEqual(kept!.chunks.map((c, i) => [kept!.attachmentId, i, digest(c)]));
    } finally {
      copy.close();
    }
  } finally {
    await store.close();
  }
});
