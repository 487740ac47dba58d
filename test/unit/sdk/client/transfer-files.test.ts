/**
 * What an encrypted export carries of files (sdk/client/transfer-files.ts), over an Attachments part
 * whose downloads are real sealed chunks opened with real keys: the files within the room, in order;
 * one past it, or one whose chunk does not open, listed as left out and not named in its item; any
 * other failure stops the export.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { toBase64 } from "../../../../protocol/encoding";
import { sealChunk } from "../../../../protocol/formats/attachments";
import { ApiError } from "../../../../sdk";
import type { ItemAttachment } from "../../../../sdk/attachments/attachment";
import { Attachments } from "../../../../sdk/client/attachments";
import type { ClientCore } from "../../../../sdk/client/core";
import type { History } from "../../../../sdk/client/history";
import type { Items } from "../../../../sdk/client/items";
import { withFileBytes, type ExportFiles } from "../../../../sdk/client/transfer-files";
import type { ItemContent } from "../../../../sdk";

/** A file of `size` random bytes, sealed as one chunk under its own key: what its item names, and the chunk the server holds. */
async function sealedFile(name: string, size: number) {
  const data = new Uint8Array(randomBytes(size));
  const key = new Uint8Array(randomBytes(32));
  const file: ItemAttachment = { id: randomUUID(), name, size, key: toBase64(key) };
  return { file, data, chunk: toBase64(await sealChunk(key, file.id, 0, true, data)) };
}

/** Attachments over a server that answers each file's one chunk from `chunks` (or `fail` throws). */
function attachmentsOver(chunks: Map<string, string>, fail?: () => Error): Attachments {
  const core = {
    http: {
      request: async (_method: string, path: string) => {
        if (fail) throw fail();
        const id = /\/attachments\/([^/]+)\/chunks\/0$/.exec(path)![1]!;
        return { index: 0, data: chunks.get(id) };
      },
    },
  } as unknown as ClientCore;
  return new Attachments(core, {} as Items, {} as History);
}

const room = (bytes: number): ExportFiles => ({ room: bytes, carried: 0, leftOut: [] });
const why = { pastRoom: "past the room" };

test("files are carried while there is room; one past it, or one that does not open, is left out and said", async () => {
  const [a, b, c, d] = await Promise.all([
    sealedFile("a.txt", 600),
    sealedFile("b.bin", 500),
    sealedFile("c.pdf", 300),
    sealedFile("d.key", 50),
  ]);
  const chunks = new Map([a, b, c, d].map((f) => [f.file.id, f.chunk]));
  // d's chunk is c's: it does not open as d's.
  chunks.set(d.file.id, c.chunk);
  const items: ItemContent[] = [
    { name: "one", type: "note", fields: {}, attachments: [a.file, b.file] },
    { name: "two", type: "note", fields: {}, attachments: [c.file, d.file] },
    { name: "three", type: "note", fields: {} },
  ];
  const budget = room(1000);
  const seen: number[] = [];
  const out = await withFileBytes(attachmentsOver(chunks), { vaultId: randomUUID(), name: "Team" }, items, budget, why, (p) =>
    seen.push(p.done),
  );
  expect(out.map((i) => [i.name, i.attachments?.map((f) => [f.name, f.data])])).toEqual([
    ["one", [["a.txt", a.data]]],
    ["two", [["c.pdf", c.data]]],
    ["three", undefined],
  ]);
  // Never the key or the server's id.
  for (const item of out) for (const f of item.attachments ?? []) expect(Object.keys(f).sort()).toEqual(["data", "name", "size"]);
  expect(budget).toEqual({
    room: 100,
    carried: 2,
    leftOut: [
      { vault: "Team", item: "one", file: "b.bin", size: 500, why: "past the room" },
      { vault: "Team", item: "two", file: "d.key", size: 50, why: expect.stringMatching(/\[ATTACHMENT_TAMPERED\]$/) },
    ],
  });
  expect(seen).toEqual([1, 2, 3, 4]);
});

test("a failure that is not the file's (the server gone) stops the export", async () => {
  const a = await sealedFile("a.txt", 10);
  const items: ItemContent[] = [{ name: "one", type: "note", fields: {}, attachments: [a.file] }];
  const gone = attachmentsOver(new Map(), () => new ApiError(401, "UNAUTHORIZED", "the session ended"));
  await expect(withFileBytes(gone, { vaultId: randomUUID(), name: "Team" }, items, room(1000), why)).rejects.toThrow("the session ended");
});
