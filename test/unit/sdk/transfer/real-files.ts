/** The real export files of test/fixtures/import/ (their origins: its README.md), read for the importer tests. */
import fs from "node:fs";
import path from "node:path";
import { zipSync } from "fflate";
import { exportEncrypted, readImport, type ImportItem, type Parsed } from "../../../../sdk/transfer";
import type { ItemContent } from "../../../../sdk";

export const fixture = (name: string): Uint8Array =>
  new Uint8Array(fs.readFileSync(path.join(__dirname, "../../../fixtures/import", name)));

/** 1Password's export.data, zipped as a .1pux is (after `edit`, for what the public file does not hold). */
export function onePux(dataFile: string, edit: (doc: any) => void = () => {}): Uint8Array {
  const doc = JSON.parse(new TextDecoder().decode(fixture(dataFile)));
  edit(doc);
  return zipSync({ "export.data": new TextEncoder().encode(JSON.stringify(doc)) });
}

export const named = (parsed: Parsed, name: string): ImportItem => {
  const found = parsed.items.filter((i) => i.name === name);
  if (found.length !== 1) throw new Error(`${found.length} items named ${name}`);
  return found[0]!;
};

/** An item's content alone (what a vault holds), without what only the import uses. */
export const contentOf = ({ history: _h, place: _p, files: _f, ...content }: ImportItem): ItemContent => content;

/** An item's files by name, as text. */
export const filesOf = (item: ImportItem): Array<[string, number]> => (item.files ?? []).map((f) => [f.name, f.data.length]);

/** A quick Argon2id for encrypted exports in tests (the floor's memory, one lane). */
export const FAST_KDF = {
  algorithm: "argon2id" as const,
  iterations: 3,
  memoryKiB: 65_536,
  parallelism: 1,
  salt: Buffer.alloc(16, 7).toString("base64"),
};

/** The parsed items (their files too) through our encrypted export and its import again: their contents, and their files' bytes. */
export async function roundTrip(parsed: Parsed, files: Array<Uint8Array[]> = []): Promise<ItemContent[]> {
  const items = parsed.items.map((i) => ({
    ...contentOf(i),
    ...(i.files && { attachments: i.files.map((f) => ({ name: f.name, size: f.data.length, data: f.data })) }),
  }));
  const file = await exportEncrypted([{ name: "moved", items }], "round trip passphrase", FAST_KDF);
  const back = (await readImport(new TextEncoder().encode(file), { password: "round trip passphrase" })).items;
  files.push(...back.map((i) => (i.files ?? []).map((f) => f.data)));
  return back.map(contentOf);
}
