/**
 * A dishonest server against a passkey's counter. A passkey signs with its counter moved on, and
 * a site that checks counters refuses a sign-in whose counter did not move: a server that hands a
 * member the item as it was before the last sign-in (a lower counter) would make the next one
 * fail at the site, or make two members sign with one counter. The SDK refuses that older item,
 * read alone or in the vault's list, by name, as it refuses any item the signed item log has moved
 * past; the real service sits behind a proxy that rewrites its answers.
 */
import { randomUUID } from "node:crypto";
import { VaultClient, type Item } from "../../sdk";
import { assertPasskey, createPasskey } from "../../sdk/passkeys";
import { newDevice } from "../helpers/devices";
import { honest, startDishonestProxy, type DishonestProxy } from "../helpers/dishonest-proxy";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

let server: TestServer;
let proxy: DishonestProxy;

beforeAll(async () => {
  server = await startTestServer({ REGISTRATION_MODE: "open" });
  proxy = await startDishonestProxy(new URL(server.url).origin);
});
afterEach(() => {
  proxy.edit = honest;
});
afterAll(async () => {
  await proxy.close();
  await server.stop();
});

/** One sign-in with the item's passkey: signed with the counter moved on, the item saved with it. */
async function signIn(client: VaultClient, item: Item): Promise<Item> {
  const passkey = item.passkeys![0]!;
  const { counter } = await assertPasskey(
    { origin: "https://login.example.com", rpId: "example.com", challenge: new Uint8Array(32) },
    passkey,
  );
  const { itemId: _i, vaultId: _v, revision, createdAt: _c, updatedAt: _u, ...content } = item;
  return client.items.edit(item.vaultId, item.itemId, { ...content, passkeys: [{ ...passkey, counter }] }, { revision });
}

test("an item handed back as it was before the last sign-in (its counter lower) is refused, alone and in the list", async () => {
  const alice = new VaultClient({ baseUrl: proxy.url, ...newDevice() });
  await alice.register({
    email: `alice-${randomUUID().slice(0, 8)}@example.test`,
    password: "correct horse battery staple",
    orgName: "Acme",
    kdf: TEST_KDF,
    rsaBits: 2048,
  });
  const { vaultId } = await alice.vaults.create("Team", "shared");
  const { passkey } = await createPasskey(
    {
      origin: "https://login.example.com",
      rp: { id: "example.com", name: "Example" },
      user: { id: new Uint8Array([1, 2, 3]), name: "ada", displayName: "Ada" },
      challenge: new Uint8Array(32),
      pubKeyCredParams: [{ type: "public-key", alg: -7 }],
    },
    [],
  );
  const made = await alice.items.add(vaultId, { name: "Example", fields: { username: "ada" }, passkeys: [passkey] });
  const itemPath = `/vaults/${vaultId}/items/${made.itemId}`;

  // The server's own answer for the item after the first sign-in, kept to hand back later.
  const once = await signIn(alice, made);
  let older: any;
  proxy.edit = (method, path, body) => {
    if (method === "GET" && path === itemPath) older = body;
    return body;
  };
  expect((await alice.items.get(vaultId, made.itemId)).passkeys![0]!.counter).toBe(1);
  proxy.edit = honest;
  expect(older?.revision).toBe(once.revision);
  const twice = await signIn(alice, once);
  expect(twice.passkeys![0]!.counter).toBe(2);
  expect((await alice.items.list(vaultId)).map((i) => i.passkeys![0]!.counter)).toEqual([2]);

  // The older record, as the item and in the list.
  proxy.edit = (method, path, body) => {
    if (method === "GET" && path === itemPath) return older;
    if (method === "GET" && path.startsWith(`/vaults/${vaultId}/items`) && Array.isArray(body?.items))
      return { ...body, items: [...body.items.filter((i: any) => i.itemId !== made.itemId), older] }; // a full read or a delta alike
    return body;
  };
  const refusedGet = await alice.items.get(vaultId, made.itemId).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(refusedGet).toMatchObject({ name: "SecurityError", code: "ITEM_STALE" });
  const refusedList = await alice.items.list(vaultId).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(refusedList).toMatchObject({ name: "SecurityError", code: "ITEM_STALE" });
  proxy.edit = honest;
  expect((await alice.items.get(vaultId, made.itemId)).passkeys![0]!.counter).toBe(2);
});
