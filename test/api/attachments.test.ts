/**
 * Files on items over HTTP on SQLite and PostgreSQL, with real SDK clients and the server as it
 * runs: a file sealed in chunks, uploaded, named in its item and read back whole by another member;
 * an upload broken off and resumed sending only what was missing; the limits; a file kept by the
 * item's history, its trash and a rekey after a member leaves (who then reads nothing), and gone with
 * the item when it is purged.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { ApiError, SecurityError, type VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { startTestServer, type TestServer } from "../helpers/server";
import { ownerAndAdmin } from "../helpers/sdk";
import { startDishonestProxy, type DishonestProxy } from "../helpers/dishonest-proxy";
import { sealChunk } from "../../protocol/formats/attachments";
import { toBase64 } from "../../protocol/encoding";

jest.setTimeout(240_000);

const MIB = 1024 * 1024;
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

async function refused(attempt: Promise<unknown>): Promise<unknown> {
  return attempt.then(
    () => {
      throw new Error("it was not refused");
    },
    (e: unknown) => e,
  );
}

describe.each(SQL_ENGINES)("attachments, on %s", (_engine, openStore) => {
  let server: TestServer;
  let proxy: DishonestProxy;
  let drop: () => Promise<void>;
  let alice: VaultClient;
  let carol: VaultClient;
  let vaultId: string;

  beforeAll(async () => {
    const store = await openStore();
    drop = store.drop;
    server = await startTestServer({ ...store.env, ATTACHMENT_MAX_BYTES: String(8 * MIB), ATTACHMENTS_PER_ITEM: "4" });
    // Honest: it only counts what the clients send.
    proxy = await startDishonestProxy(new URL(server.url).origin);
    ({ alice, carol } = await ownerAndAdmin(proxy.url));
    vaultId = (await alice.vaults.create("Team", "shared")).vaultId;
    await alice.members.share(vaultId, carol.account.userId, "member");
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    await drop?.();
  });

  const newItem = async (name = `Server ${randomUUID().slice(0, 6)}`) =>
    (await alice.items.add(vaultId, { name, fields: { password: "hunter2" } })).itemId;

  test("a 5 MiB file is named in its item, and another member reads it back byte for byte", async () => {
    const itemId = await newItem();
    const data = new Uint8Array(randomBytes(5 * MIB + 123));
    const progress: number[] = [];
    const item = await alice.attachments.upload(vaultId, itemId, "backup.tar", new Blob([data]), {
      type: "application/x-tar",
      onProgress: (sent) => progress.push(sent),
    });
    expect(item.attachments).toEqual([expect.objectContaining({ name: "backup.tar", size: data.length, type: "application/x-tar" })]);
    expect(progress.at(-1)).toBe(data.length);
    const seen = await carol.items.get(vaultId, itemId);
    const back = await carol.attachments.download(vaultId, seen.attachments![0]!);
    expect(sha(back!)).toBe(sha(data));
    // Chunk by chunk, nothing kept: the same bytes.
    const parts: Uint8Array[] = [];
    await carol.attachments.download(vaultId, seen.attachments![0]!, (chunk) => void parts.push(chunk));
    expect(parts.length).toBe(6);
    expect(sha(Buffer.concat(parts))).toBe(sha(data));
    // The server never saw the file, its name or its key.
    const sent = JSON.stringify(proxy.sent.slice(-40));
    expect(sent).not.toContain("backup.tar");
    expect(sent).not.toContain(seen.attachments![0]!.key);
  });

  test("an empty file is one chunk, and reads back empty", async () => {
    const itemId = await newItem();
    const item = await alice.attachments.upload(vaultId, itemId, "empty.txt", new Uint8Array(0));
    expect((await alice.attachments.download(vaultId, item.attachments![0]!))!.length).toBe(0);
  });

  test("an upload broken off is resumed: only the chunks the server lacks are sent again", async () => {
    const itemId = await newItem();
    const data = new Uint8Array(randomBytes(4 * MIB));
    let pending: Parameters<VaultClient["attachments"]["resume"]>[0] | undefined;
    let reads = 0;
    // A source that breaks after its second chunk (a disk gone, a closed laptop).
    const breaking = {
      size: data.length,
      read: async (offset: number, length: number) => {
        if (++reads > 2) throw new Error("the file went away");
        return data.subarray(offset, offset + length);
      },
    };
    expect(await refused(alice.attachments.upload(vaultId, itemId, "big.bin", breaking, { onBegun: (p) => (pending = p) }))).toMatchObject({
      message: "the file went away",
    });
    expect(pending).toBeDefined();
    // When the upload answers, nothing of it goes on: the second chunk, in flight at the break, has arrived.
    const uploaded = await alice.http.request<{ received: number[] }>("GET", `/vaults/${vaultId}/attachments/${pending!.attachment.id}`);
    expect(uploaded.received).toEqual([0, 1]);
    // Not yet on the item, and not readable by the others.
    expect((await alice.items.get(vaultId, itemId)).attachments).toBeUndefined();
    const status = await carol.http.request("GET", `/vaults/${vaultId}/attachments/${pending!.attachment.id}`).catch((e) => e);
    expect(status).toMatchObject({ status: 404 });
    proxy.sent.length = 0;
    const item = await alice.attachments.resume(pending!, data);
    const puts = proxy.sent
      .filter((s) => s.method === "PUT" && s.path.includes(pending!.attachment.id))
      .map((s) => s.path.split("/").pop());
    expect(puts.sort()).toEqual(["2", "3"]);
    expect(sha((await carol.attachments.download(vaultId, item.attachments![0]!))!)).toBe(sha(data));
  });

  test("a file past ATTACHMENT_MAX_BYTES, and one more than ATTACHMENTS_PER_ITEM, are refused with the limit named", async () => {
    const itemId = await newItem();
    const tooBig = await refused(alice.attachments.upload(vaultId, itemId, "huge.iso", new Uint8Array(8 * MIB + 1)));
    expect(tooBig).toBeInstanceOf(ApiError);
    expect(tooBig).toMatchObject({ status: 413, message: expect.stringContaining("ATTACHMENT_MAX_BYTES") });
    for (let i = 0; i < 4; i++) await alice.attachments.upload(vaultId, itemId, `note-${i}.txt`, new TextEncoder().encode(`note ${i}`));
    expect(await refused(alice.attachments.upload(vaultId, itemId, "one-more.txt", new Uint8Array(1)))).toMatchObject({
      status: 413,
      message: expect.stringContaining("ATTACHMENTS_PER_ITEM"),
    });
    expect((await alice.items.get(vaultId, itemId)).attachments).toHaveLength(4);
  });

  test("a file taken off stays readable from the revision that had it; tidy deletes none a kept revision names", async () => {
    const itemId = await newItem();
    const data = new TextEncoder().encode("the old contract");
    const withFile = await alice.attachments.upload(vaultId, itemId, "contract.pdf", data);
    const after = await alice.attachments.remove(vaultId, itemId, withFile.attachments![0]!.id);
    expect(after.attachments).toBeUndefined();
    const [older] = (await carol.items.history(vaultId, itemId)).filter((r) => r.attachments?.length);
    expect(older!.revision).toBe(withFile.revision);
    expect(new TextDecoder().decode((await carol.attachments.download(vaultId, older!.attachments![0]!))!)).toBe("the old contract");
    expect(await alice.attachments.tidy(vaultId, itemId)).toBe(0);
  });

  test("tidy deletes an upload nobody named, and keeps the files the item and its kept revisions name", async () => {
    const itemId = await newItem();
    const kept = await alice.attachments.upload(vaultId, itemId, "kept.txt", new TextEncoder().encode("kept"));
    const old = await alice.attachments.upload(vaultId, itemId, "old.txt", new TextEncoder().encode("old"));
    await alice.attachments.remove(vaultId, itemId, old.attachments![1]!.id);
    // A finished upload the uploader never named in the item (it went away between the finish and the item write).
    const orphan = randomUUID();
    const key = new Uint8Array(randomBytes(32));
    await alice.http.request("POST", `/vaults/${vaultId}/items/${itemId}/attachments`, { body: { attachmentId: orphan, size: 3 } });
    const sealed = await sealChunk(key, orphan, 0, true, new Uint8Array([1, 2, 3]));
    await alice.http.request("PUT", `/vaults/${vaultId}/attachments/${orphan}/chunks/0`, { body: { data: toBase64(sealed) } });
    await alice.http.request("POST", `/vaults/${vaultId}/attachments/${orphan}/finish`, { body: {} });
    const listed = async () =>
      (
        await alice.http.request<{ attachments: Array<{ attachmentId: string }> }>("GET", `/vaults/${vaultId}/items/${itemId}/attachments`)
      ).attachments
        .map((a) => a.attachmentId)
        .sort();
    // Within the grace period, nothing goes: the orphan could be about to be named.
    expect(await alice.attachments.tidy(vaultId, itemId)).toBe(0);
    expect(await alice.attachments.tidy(vaultId, itemId, { graceMs: 0 })).toBe(1);
    expect(await listed()).toEqual([kept.attachments![0]!.id, old.attachments![1]!.id].sort());
  });

  test("a chunk is refused as its write refuses it: another member's upload 403, a finished file 409, a bad index 400, none 404", async () => {
    const itemId = await newItem();
    const id = randomUUID();
    const key = new Uint8Array(randomBytes(32));
    await alice.http.request("POST", `/vaults/${vaultId}/items/${itemId}/attachments`, { body: { attachmentId: id, size: 3 } });
    const data = toBase64(await sealChunk(key, id, 0, true, new Uint8Array([1, 2, 3])));
    const put = (who: VaultClient, index: number, attachmentId = id) =>
      refused(who.http.request("PUT", `/vaults/${vaultId}/attachments/${attachmentId}/chunks/${index}`, { body: { data } }));
    const statusOf = async (attempt: Promise<unknown>) => ((await attempt) as ApiError).status;
    expect(await statusOf(put(carol, 0))).toBe(403);
    expect(await statusOf(put(alice, 1))).toBe(400);
    expect(await statusOf(put(alice, 0, randomUUID()))).toBe(404);
    await alice.http.request("PUT", `/vaults/${vaultId}/attachments/${id}/chunks/0`, { body: { data } });
    await alice.http.request("POST", `/vaults/${vaultId}/attachments/${id}/finish`, { body: {} });
    expect(await statusOf(put(alice, 0))).toBe(409);
    expect(await statusOf(put(carol, 0))).toBe(409);
  });

  test("a trashed item keeps its files; purged, they are gone from the server", async () => {
    const itemId = await newItem();
    const item = await alice.attachments.upload(vaultId, itemId, "keys.txt", new TextEncoder().encode("ssh keys"));
    const file = item.attachments![0]!;
    await alice.items.delete(vaultId, itemId);
    const [trashed] = (await carol.items.trash(vaultId)).filter((t) => t.itemId === itemId);
    expect(new TextDecoder().decode((await carol.attachments.download(vaultId, trashed!.attachments![0]!))!)).toBe("ssh keys");
    await alice.items.restore(vaultId, itemId);
    expect(new TextDecoder().decode((await alice.attachments.download(vaultId, file))!)).toBe("ssh keys");
    await alice.items.delete(vaultId, itemId);
    await alice.items.purge(vaultId, itemId);
    const gone = await refused(alice.attachments.download(vaultId, file));
    expect(gone).toBeInstanceOf(SecurityError);
    expect((gone as SecurityError).code).toBe("ATTACHMENT_WITHHELD");
  });

  test("a file is reached only through its own vault: named through another vault its member holds, it is not found", async () => {
    const own = (await alice.vaults.create(`Private ${randomUUID().slice(0, 6)}`, "personal")).vaultId;
    const itemId = (await alice.items.add(own, { name: "Diary", fields: {} })).itemId;
    const file = (await alice.attachments.upload(own, itemId, "diary.txt", new TextEncoder().encode("dear diary"))).attachments![0]!;
    // Carol is a member of the shared vault, not of Alice's own: she names the file through hers.
    for (const [method, path] of [
      ["GET", `/vaults/${vaultId}/attachments/${file.id}/chunks/0`],
      ["GET", `/vaults/${vaultId}/attachments/${file.id}`],
      ["DELETE", `/vaults/${vaultId}/attachments/${file.id}`],
    ] as const)
      expect(await refused(carol.http.request(method, path))).toMatchObject({ status: 404 });
    expect(new TextDecoder().decode((await alice.attachments.download(own, file))!)).toBe("dear diary");
  });

  test("a rekey after a member leaves keeps every file; the member who left reads none", async () => {
    const team = (await alice.vaults.create(`Ops ${randomUUID().slice(0, 6)}`, "shared")).vaultId;
    await alice.members.share(team, carol.account.userId, "member");
    const itemId = (await alice.items.add(team, { name: "Router", fields: { password: "p" } })).itemId;
    const data = new Uint8Array(randomBytes(MIB + 7));
    const item = await carol.attachments.upload(team, itemId, "router.cfg", data);
    const file = item.attachments![0]!;
    const removed = await alice.members.remove(team, carol.account.userId);
    expect(removed.rekeyRequired).toBe(true);
    await alice.vaults.rekey(team);
    const rekeyed = await alice.items.get(team, itemId);
    expect(rekeyed.attachments).toEqual([file]);
    expect(sha((await alice.attachments.download(team, rekeyed.attachments![0]!))!)).toBe(sha(data));
    // Carol still holds the file's key, but the server no longer answers her its chunks.
    const chunk = await refused(carol.http.request("GET", `/vaults/${team}/attachments/${file.id}/chunks/0`));
    expect(chunk).toMatchObject({ status: 404 });
  });
});
