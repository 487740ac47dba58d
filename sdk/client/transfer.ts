/**
 * Importing into a vault and exporting out of it (the formats: sdk/transfer/). An import seals
 * every item here and sends them in one bulk request per 5,000 (all or none each), on a signed
 * vault with an `import` link naming the whole item set after it, computed from the set this
 * client verified. An item read with earlier versions (a KeePass entry's history) is written after
 * the bulk, one by one: its oldest version created, each later one an edit, the last its current
 * content, so that the item's history in the vault holds them. Then each item's files are uploaded
 * as new attachments of it (transfer-files.ts). An export is recorded by the server first (an audit
 * record), then made here from the items opened and checked as any read; an encrypted one carries
 * the files' bytes, downloaded and checked here.
 */
import { checkedContent, itemDataJson, type ItemContent } from "../item-types";
import { utf8 } from "../../protocol/encoding";
import { sealItem, type SealedItem } from "../items";
import { itemStatesOf, itemSetDigest } from "../../protocol/formats/item-log";
import type { ExportFormat, ExportedVault, FileLeftOut } from "../transfer/export";
import type { ImportFile, ImportItem, LeftOut } from "../transfer/types";
import { splitByTopLevel } from "../transfer/split";
import { ApiError } from "../errors";
import type { Attachments } from "./attachments";
import type { ClientCore } from "./core";
import type { Items } from "./items";
import type { Vaults } from "./vaults";
import { uploadFiles, withFileBytes, type ExportFiles, type FileFailure, type FileProgress, type ItemFiles } from "./transfer-files";

/** An encrypted export's passphrase is at least this long (the clients say so before asking the SDK). */
export const MIN_EXPORT_PASSPHRASE = 12;
const MAX_DATA_BYTES = 256 * 1024 - 28;
const MAX_NAME_BYTES = 4 * 1024 - 28;

/** Items one bulk request adds at most (the server's MAX_IMPORT_ITEMS). */
export const IMPORT_BATCH = 5_000;

/** An import's progress (items sealed, then sent; then files sent, one by one), or an encrypted export's (files read). */
export interface TransferProgress {
  phase: "seal" | "upload" | FileProgress["phase"];
  done: number;
  total: number;
}

export type { FileFailure } from "./transfer-files";

export interface ExportOptions {
  /** Each file read for an encrypted export. */
  onProgress?: (p: TransferProgress) => void;
  /** Once an encrypted export is made: how many files it carries, and the ones it left out (listed in it too). */
  onFiles?: (report: { carried: number; leftOut: FileLeftOut[] }) => void;
}

export interface ImportResult {
  imported: number;
  /** Items sent with a part left out (a one-time code seed that gives no codes), and why. */
  partial: Array<{ name: string; left: LeftOut[] }>;
  /** Contents that are not an item (no name, a field that is not text): not sent. */
  skipped: Array<{ name: string; why: string }>;
  /** Requests made: one per bulk batch, one per version of each item written with its history (a file's upload not counted). */
  requests: number;
  /** Files that came in, each a new attachment of its item. */
  files: number;
  /** Files that did not come in (their items did), by item and file name, with why. */
  filesFailed: FileFailure[];
}

/** A vault an import with a vault per folder put items into. */
export interface ImportedVault {
  vaultId: string;
  /** The folder of the file the vault was made for, and is named after; undefined for the vault the import was asked into. */
  place?: string;
  imported: number;
}

export interface VaultPerFolderResult extends ImportResult {
  /** Each vault that received items, in the order they were filled (the vault asked into last, if any item was kept at no folder). */
  vaults: ImportedVault[];
}

/** An item to send, with its earlier versions (oldest first) when it has any, and its files. */
interface Importable {
  item: ItemContent;
  history: ItemContent[];
  files: ImportFile[];
}

export class Transfers {
  constructor(
    private readonly core: ClientCore,
    private readonly vaults: Vaults,
    private readonly items: Items,
    private readonly attachments: Attachments,
  ) {}

  async importItems(
    vaultId: string,
    contents: readonly (ItemContent | ImportItem)[],
    onProgress: (p: TransferProgress) => void = () => {},
  ): Promise<ImportResult> {
    const { good, partial, skipped } = await importable(contents);
    const bulk = good.filter((g) => g.history.length === 0);
    const withHistory = good.filter((g) => g.history.length > 0);
    let imported = 0;
    let requests = 0;
    const withFiles: ItemFiles[] = [];
    const added = (g: Importable, itemId: string) => {
      if (g.files.length > 0) withFiles.push({ itemId, name: g.item.name, files: g.files });
    };
    try {
      for (let at = 0; at < bulk.length; at += IMPORT_BATCH) {
        const batch = bulk.slice(at, at + IMPORT_BATCH);
        const ids = await this.importBatch(
          vaultId,
          batch.map((g) => g.item),
          (p) => onProgress({ ...p, done: at + p.done, total: good.length }),
        );
        batch.forEach((g, n) => added(g, ids[n]!));
        imported += batch.length;
        requests++;
        onProgress({ phase: "upload", done: imported, total: good.length });
      }
      for (const g of withHistory) {
        const [oldest, ...later] = g.history;
        const created = await this.items.addItem(vaultId, oldest!);
        for (const version of [...later, g.item]) await this.items.editItem(vaultId, created.itemId, version);
        added(g, created.itemId);
        imported++;
        requests += g.history.length + 1;
        onProgress({ phase: "upload", done: imported, total: good.length });
      }
    } catch (err) {
      // Each batch is all or none: say how many are in already, so that no one imports them twice.
      if (imported > 0 && err instanceof Error)
        err.message += ` (${imported} of ${good.length} items were imported before this; the rest were not)`;
      throw err;
    }
    const { files, failed } = await uploadFiles(this.attachments, vaultId, withFiles, onProgress);
    return { imported, partial, skipped, requests, files, filesFailed: failed };
  }

  /**
   * One new vault for each place of the file (`splitByTopLevel`: a 1Password vault, a top-level
   * folder, a KeePass top-level group), named after it and holding its items; the items kept at no
   * such place go into `vaultId`. Progress names the vault being filled.
   */
  async importVaultPerFolder(
    vaultId: string,
    contents: readonly ImportItem[],
    onProgress: (p: TransferProgress & { vaultId: string; place?: string }) => void = () => {},
  ): Promise<VaultPerFolderResult> {
    const total: VaultPerFolderResult = { imported: 0, partial: [], skipped: [], requests: 0, files: 0, filesFailed: [], vaults: [] };
    for (const { place, items } of splitByTopLevel({ items: [...contents] })) {
      try {
        const target = place === undefined ? vaultId : (await this.vaults.createVault(place, "shared")).vaultId;
        const result = await this.importItems(target, items, (p) => onProgress({ ...p, vaultId: target, place }));
        total.imported += result.imported;
        total.requests += result.requests;
        total.partial.push(...result.partial);
        total.skipped.push(...result.skipped);
        total.files += result.files;
        total.filesFailed.push(...result.filesFailed);
        total.vaults.push({ vaultId: target, place, imported: result.imported });
      } catch (err) {
        // The vaults filled before stay: name them, so that no one imports them twice.
        const filled = total.vaults.map((v) => (v.place === undefined ? "the vault imported into" : `"${v.place}"`));
        if (filled.length > 0 && err instanceof Error) err.message += ` (filled before this, and kept: ${filled.join(", ")})`;
        throw err;
      }
    }
    return total;
  }

  /**
   * One bulk request: the batch sealed under the vault's current key, and on a signed vault an
   * `import` link naming the verified set and the new items. `progress` counts within the batch.
   * Answers the new items' ids, in the batch's order.
   */
  private async importBatch(vaultId: string, batch: readonly ItemContent[], progress: (p: TransferProgress) => void): Promise<string[]> {
    let ids: string[] = [];
    await this.vaults.withCurrentKey(vaultId, async (key, keyVersion, roster) => {
      const sealed: SealedItem[] = [];
      for (const c of batch) {
        sealed.push(await sealItem(key, vaultId, globalThis.crypto.randomUUID(), c));
        if (sealed.length % 250 === 0 || sealed.length === batch.length)
          progress({ phase: "seal", done: sealed.length, total: batch.length });
      }
      const added = await itemStatesOf(sealed.map((s) => ({ ...s, revision: 1 })));
      await this.items.logged(vaultId, { keyVersion }, roster, true, async (log, signedRoster) => {
        // The set after the import: the verified set and the new items.
        if (!log.items) throw new ApiError(409, "CONFLICT", `vault ${vaultId} kept changing while it was read: try the import again`);
        const after = new Map([...log.items, ...added]);
        const itemLink = await this.items.logs.sign(
          log.head,
          { op: "import", count: after.size, setDigest: await itemSetDigest(after), added: added.size },
          signedRoster.state,
        );
        progress({ phase: "upload", done: 0, total: batch.length });
        await this.core.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/items/bulk`, {
          body: { items: sealed, keyVersion, itemLink },
        });
        await this.items.logs.saw(itemLink, after);
      });
      ids = sealed.map((s) => s.itemId);
    });
    return ids;
  }

  /**
   * The vaults' items in `format` (an encrypted export needs `passphrase`, and carries the items'
   * files); each vault's export is an audit record, made before anything is read.
   */
  async exportVaults(vaultIds: readonly string[], format: ExportFormat, passphrase?: string, opts: ExportOptions = {}): Promise<string> {
    if (format === "encrypted" && (passphrase ?? "").length < MIN_EXPORT_PASSPHRASE)
      throw new Error(`an encrypted export needs a passphrase of at least ${MIN_EXPORT_PASSPHRASE} characters`);
    // The writers (and the CSV library) are loaded when an export is made, not on a web page's first load.
    const { exportCsv, exportEncrypted, exportJson, EXPORT_FILE_BYTES } = await import("../transfer/export.js");
    const { sizeText } = await import("../transfer/limits.js");
    const files: ExportFiles = { room: EXPORT_FILE_BYTES, carried: 0, leftOut: [] };
    const pastRoom = `the files of one export hold at most ${sizeText(EXPORT_FILE_BYTES)}: download it from the item instead`;
    const vaults: ExportedVault[] = [];
    for (const vaultId of vaultIds) {
      await this.core.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/exports`, { body: { format } });
      const vault = await this.vaults.getCheckedVault(vaultId);
      const items = (await this.items.listItems(vaultId)).map(
        ({ itemId: _i, vaultId: _v, revision: _r, createdAt: _c, updatedAt: _u, ...content }) => content,
      );
      const name = vault.nameCheck.name;
      vaults.push({
        name,
        items:
          format === "encrypted"
            ? await withFileBytes(this.attachments, { vaultId, name }, items, files, { pastRoom }, opts.onProgress)
            : items,
      });
    }
    if (format === "json") return exportJson(vaults);
    if (format === "csv") return exportCsv(vaults);
    const text = await exportEncrypted(vaults, passphrase!, undefined, files.leftOut);
    opts.onFiles?.({ carried: files.carried, leftOut: files.leftOut });
    return text;
  }
}

/**
 * Checks a content as the server would take it (256 KiB of data, 4 KiB of name, before sealing
 * adds its 28 bytes): the item, or an Error saying why not. A one-time code seed that would not
 * give codes (or would make a client build huge ones) is taken out of it, and said in `left`.
 */
function sendable(c: ItemContent, totpProblem: (seed: string) => string | undefined, left: LeftOut[]): ItemContent {
  // A file an item names is another vault's (its key and id): an import brings files as bytes (`ImportItem.files`).
  for (const a of c.attachments ?? [])
    left.push({ part: `file ${a.name}`, why: "the file names an attachment elsewhere, not its bytes: not carried" });
  const item = checkedContent({ ...c, attachments: undefined });
  const data = utf8(itemDataJson(item)).length;
  if (data > MAX_DATA_BYTES) throw new Error(`its data is ${data} bytes, more than an item holds (256 KiB)`);
  if (utf8(item.name).length > MAX_NAME_BYTES) throw new Error("its name is longer than an item's (4 KiB)");
  const problem = item.totp === undefined ? undefined : totpProblem(item.totp);
  if (problem) {
    delete item.totp;
    left.push({ part: "one-time code seed", why: problem });
  }
  return item;
}

/**
 * The contents that are items (each with its earlier versions that are too), what was left out of
 * them and what is not sent, with why.
 */
async function importable(
  contents: readonly (ItemContent | ImportItem)[],
): Promise<{ good: Importable[]; partial: ImportResult["partial"]; skipped: ImportResult["skipped"] }> {
  const good: Importable[] = [];
  const partial: ImportResult["partial"] = [];
  const skipped: ImportResult["skipped"] = [];
  const { totpProblem } = await import("../totp.js");
  for (const c of contents) {
    const name = typeof c?.name === "string" && c.name ? c.name : "(no name)";
    const left: LeftOut[] = [];
    let item: ItemContent;
    try {
      item = sendable(c, totpProblem, left);
    } catch (err) {
      skipped.push({ name, why: (err as Error).message });
      continue;
    }
    // An earlier version that could not be an item is dropped from the history, and said.
    const history = ((c as ImportItem).history ?? []).flatMap((h) => {
      try {
        return [sendable(h, totpProblem, [])];
      } catch (err) {
        left.push({ part: "an earlier version", why: (err as Error).message });
        return [];
      }
    });
    good.push({ item, history, files: (c as ImportItem).files ?? [] });
    if (left.length > 0) partial.push({ name, left });
  }
  return { good, partial, skipped };
}
