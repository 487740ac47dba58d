/**
 * Files on items against a dishonest server: real SDK clients, the real service behind a proxy that
 * rewrites its answers (test/helpers/dishonest-proxy.ts). The server holds every chunk and can answer
 * anything for it, but it never holds a file's key: a chunk of another file, of another place, cut
 * short, changed, or not answered at all is refused by name, and so is an item rolled back to a
 * revision with other files. Nothing a request carries gives away a file, its name or its key.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { SecurityError, type VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin } from "../helpers/sdk";
import { dishonestSuite, type Edit } from "../helpers/dishonest-proxy";

jest.setTimeout(240_000);

const MIB = 1024 * 1024;

async function refusedAs(attempt: Promise<unknown>, code: string): Promise<SecurityError> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SecurityError);
  expect((err as SecurityError).code).toBe(code);
  return err as SecurityError;
}

describe.each(SQL_ENGINES)("attachments against a dishonest server, on %s", (_engine, openStore) => {
  const suite = dishonestSuite(openStore);
  let alice: VaultClient;
  let carol: VaultClient;
  let vaultId: string;

  beforeAll(async () => {
    ({ alice, carol } = await ownerAndAdmin(suite.proxy.url));
    vaultId = (await alice.vaults.create("Team", "shared")).vaultId;
    await alice.members.share(vaultId, carol.account.userId, "member");
  });

  /** An item with one file of `size` random bytes, attached by alice: the item as carol opens it. */
  async function itemWithFile(size = 2 * MIB + 10, name = "payroll.xlsx") {
    const itemId = (await alice.items.add(vaultId, { name: `Item ${randomUUID().slice(0, 6)}`, fields: {} })).itemId;
    const data = new Uint8Array(randomBytes(size));
    await alice.attachments.upload(vaultId, itemId, name, data);
    const item = await carol.items.get(vaultId, itemId);
    return { itemId, data, item, file: item.attachments![0]! };
  }

  const chunkPath = (attachmentId: string, index: number) => `/vaults/${vaultId}/attachments/${attachmentId}/chunks/${index}`;
  const onChunk =
    (attachmentId: string, index: number, change: (body: any) => any): Edit =>
    (method, path, body, status) =>
      method === "GET" && path === chunkPath(attachmentId, index) && status === 200 ? change(body) : body;

  test("a chunk of another file, in its place: ATTACHMENT_TAMPERED", async () => {
    const a = await itemWithFile();
    const b = await itemWithFile();
    const other = await carol.http.request<{ index: number; data: string }>("GET", chunkPath(b.file.id, 0));
    suite.proxy.edit = onChunk(a.file.id, 0, () => other);
    await refusedAs(carol.attachments.download(vaultId, a.file), "ATTACHMENT_TAMPERED");
  });

  test("the file's own chunks in another order: ATTACHMENT_TAMPERED", async () => {
    const a = await itemWithFile();
    const second = await carol.http.request<{ index: number; data: string }>("GET", chunkPath(a.file.id, 1));
    suite.proxy.edit = onChunk(a.file.id, 0, () => ({ ...second, index: 0 }));
    await refusedAs(carol.attachments.download(vaultId, a.file), "ATTACHMENT_TAMPERED");
  });

  test("a chunk answered as another index: ATTACHMENT_TAMPERED", async () => {
    const a = await itemWithFile();
    suite.proxy.edit = onChunk(a.file.id, 1, (body) => ({ ...body, index: 2 }));
    await refusedAs(carol.attachments.download(vaultId, a.file), "ATTACHMENT_TAMPERED");
  });

  test("one bit of a chunk changed: ATTACHMENT_TAMPERED", async () => {
    const a = await itemWithFile();
    suite.proxy.edit = onChunk(a.file.id, 2, (body) => {
      const bytes = Buffer.from(body.data, "base64");
      bytes[bytes.length - 1]! ^= 1;
      return { ...body, data: bytes.toString("base64") };
    });
    await refusedAs(carol.attachments.download(vaultId, a.file), "ATTACHMENT_TAMPERED");
  });

  test("a file answered as if it ended early (its first chunk, as the last): ATTACHMENT_TAMPERED", async () => {
    // Every file has its own key, so the server has no other file's final chunk to offer: its best
    // is one of this file's own; the index and the final flag sealed into each chunk refuse it
    // (each alone: test/unit/protocol/formats/attachments.test.ts).
    const a = await itemWithFile(MIB + 5);
    const first = await carol.http.request<{ index: number; data: string }>("GET", chunkPath(a.file.id, 0));
    suite.proxy.edit = onChunk(a.file.id, 1, () => ({ ...first, index: 1 }));
    await refusedAs(carol.attachments.download(vaultId, a.file), "ATTACHMENT_TAMPERED");
  });

  test("a file the server drops: ATTACHMENT_WITHHELD, and nothing was handed to the writer", async () => {
    const a = await itemWithFile();
    // The server deletes it behind the item's back (as any member's request could, but the item still names it).
    await alice.http.request("DELETE", `/vaults/${vaultId}/attachments/${a.file.id}`);
    const written: Uint8Array[] = [];
    await refusedAs(
      carol.attachments.download(vaultId, a.file, (c) => void written.push(c)),
      "ATTACHMENT_WITHHELD",
    );
    expect(written).toEqual([]);
  });

  test("the item rolled back to a revision with another file: refused by the signed item log", async () => {
    const a = await itemWithFile(1000, "contract-v1.pdf");
    const oldRecord = await carol.http.request<any>("GET", `/vaults/${vaultId}/items/${a.itemId}`);
    await alice.attachments.remove(vaultId, a.itemId, a.file.id);
    await alice.attachments.upload(vaultId, a.itemId, "contract-v2.pdf", new Uint8Array(randomBytes(1000)));
    suite.proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${vaultId}/items/${a.itemId}` ? { ...oldRecord, revision: body.revision } : body;
    const err = await carol.items.get(vaultId, a.itemId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecurityError);
    suite.proxy.edit = (method, path, body) => (method === "GET" && path === `/vaults/${vaultId}/items/${a.itemId}` ? oldRecord : body);
    expect(await carol.items.get(vaultId, a.itemId).catch((e: unknown) => e)).toBeInstanceOf(SecurityError);
  });

  test("no request carries a file's bytes, its name or its key", async () => {
    suite.proxy.sent.length = 0;
    const secret = new TextEncoder().encode("the launch codes are 0000");
    const itemId = (await alice.items.add(vaultId, { name: "Launch", fields: {} })).itemId;
    const item = await alice.attachments.upload(vaultId, itemId, "launch-codes.txt", secret);
    await carol.attachments.download(vaultId, (await carol.items.get(vaultId, itemId)).attachments![0]!);
    const sent = JSON.stringify(suite.proxy.sent);
    expect(suite.proxy.sent.some((s) => s.method === "PUT")).toBe(true);
    for (const leak of ["launch-codes.txt", "launch codes", toBase64(secret), item.attachments![0]!.key]) expect(sent).not.toContain(leak);
  });
});
