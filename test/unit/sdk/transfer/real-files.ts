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
export const contentOf = ({ history: _h, place: _p, ...content }: ImportItem): ItemContent => content;

/** A quick Argon2id for encrypted exports in tests (the floor's memory, one lane). */
export const FAST_KDF = {
  algorithm: "argon2id" as const,
  iterations: 3,
  memoryKiB: 65_536,
  parallelism: 1,
  salt: Buffer.alloc(16, 7).toString("base64"),
};

/** The parsed items through our encrypted export and its import again. */
export async function roundTrip(parsed: Parsed): Promise<ItemContent[]> {
  const file = await exportEncrypted([{ name: "moved", items: parsed.items.map(contentOf) }], "round trip passphrase", FAST_KDF);
  return (await readImport(new TextEncoder().encode(file), { password: "round trip passphrase" })).items.map(contentOf);
}
