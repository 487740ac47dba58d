/**
 * Answers that nobody reads, over many connections. The gateway holds what a client has not taken
 * yet; a live probe grew a server from 88 to 988 MB for a minute with 80 connections each asking
 * for a member's 10 MB item list and never reading. Every JSON answer is now charged to its caller
 * until it has gone out (lib/http/answer-budget.ts): past the user's share of ANSWER_MEMORY_LIMIT
 * (a quarter), or its organization's (a half), it is refused (429) and dropped at once, so one
 * tenant's unread answers never hold more than its share, and another's are still answered.
 * Against the server as shipped.
 */
import net from "node:net";
import { randomUUID } from "node:crypto";
import { Api, newOrg, sharedVault, type TestUser } from "../helpers/client";
import { encryptItem } from "../helpers/crypto";
import { killAllServers, startShippedServer, type ShippedServer } from "../helpers/process";

const MIB = 1024 * 1024;

let server: ShippedServer;
let api: Api;

beforeAll(async () => {
  // A quarter, 25 MiB, holds one of the lists below (about 24 MB); a half, two.
  // REQUEST_TIMEOUT 6 s: a held answer's quantum is 2 s.
  server = await startShippedServer({ REGISTRATION_MODE: "open", ANSWER_MEMORY_LIMIT: String(100 * MIB), REQUEST_TIMEOUT: "6000" });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.stop();
  killAllServers();
});

/** A vault of `owner`'s shared with `members`, holding about 24 MB of items: larger than loopback's socket buffers take. */
async function bigVault(owner: TestUser, members: TestUser[] = []): Promise<string> {
  const vault = await sharedVault(
    api,
    owner,
    members.map((m) => [m, "member"]),
  );
  for (let i = 0; i < 96; i++) {
    const itemId = randomUUID();
    const res = await api.post(`/vaults/${vault.vaultId}/items`, {
      token: owner.token,
      body: encryptItem(vault.vaultKey, vault.vaultId, itemId, "x".repeat(190_000), itemId),
    });
    expect(res.status).toBe(201);
  }
  return vault.vaultId;
}

const opened: net.Socket[] = [];

/** Asks for the vault's whole item list on a connection of its own and reads no more than the answer's status. */
function unreadList(user: TestUser, vaultId: string): Promise<number> {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), "127.0.0.1");
  opened.push(socket);
  socket.write(`GET /api/v1/vaults/${vaultId}/items HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\n\r\n`);
  return new Promise((resolve, reject) => {
    socket.once("data", (d: Buffer) => {
      socket.pause();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(d.toString("latin1"))?.[1]));
    });
    socket.once("error", reject);
  });
}

test("a tenant's unread lists hold no more than its share; another organization's are still answered, and the room comes back", async () => {
  const { owner, users } = await newOrg(api, ["member", "member"]);
  const vaultId = await bigVault(owner, users);
  const other = (await newOrg(api)).owner;
  const otherVault = await bigVault(other);

  // The owner's first list is held; its next ones are past its share: refused, not held.
  const mine: number[] = [];
  for (let i = 0; i < 4; i++) mine.push(await unreadList(owner, vaultId));
  expect(mine).toEqual([200, 429, 429, 429]);
  // A second member of the organization gets one (the organization's half holds two); a third does not.
  expect(await unreadList(users[0]!, vaultId)).toBe(200);
  expect(await unreadList(users[1]!, vaultId)).toBe(429);
  // Another organization's member is answered meanwhile.
  expect(await unreadList(other, otherVault)).toBe(200);

  // The connections go: their answers' room comes back, and the owner, once the wait it was given
  // with its last refusal is over (Retry-After: 1), reads its list whole.
  for (const s of opened.splice(0)) s.destroy();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const listed = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
  expect([listed.status, listed.body.items.length]).toEqual([200, 96]);
});

test("a refusal names whose share is used up and asks the client to come back; asked again sooner, nothing is made", async () => {
  const { owner } = await newOrg(api);
  const vaultId = await bigVault(owner);
  expect(await unreadList(owner, vaultId)).toBe(200);
  const refused = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
  expect([refused.status, refused.body.error.code, refused.headers.get("retry-after")]).toEqual([429, "RATE_LIMITED", "1"]);
  expect(refused.body.error.message).toBe("Too many answers of yours waiting to be read");
  // Asked again before that second: refused before the list is even made.
  const again = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
  expect([again.status, again.headers.get("retry-after")]).toEqual([429, "1"]);
  expect(again.body.error.message).toMatch(/^Asked again before the wait it was given/);
  // After it, the list is made and judged again.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const later = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
  expect([later.status, later.body.error.message]).toEqual([429, "Too many answers of yours waiting to be read"]);
  for (const s of opened.splice(0)) s.destroy();
});

test("at the process's limit, lists held past their quantum by organizations holding more are closed for another's", async () => {
  const orgs = [await newOrg(api, ["member"]), await newOrg(api, ["member"])];
  const vaults = [await bigVault(orgs[0]!.owner, orgs[0]!.users), await bigVault(orgs[1]!.owner, orgs[1]!.users)];
  const { owner } = await newOrg(api);
  const vaultId = await bigVault(owner);
  // Two organizations of two hold four lists (about 96 MB of the 100 MiB), reading nothing.
  const held = orgs.flatMap(({ owner: o, users }, i) => [unreadList(o, vaults[i]!), unreadList(users[0]!, vaults[i]!)]);
  expect(await Promise.all(held)).toEqual([200, 200, 200, 200]);
  // No room, and none of theirs has had its quantum yet: asked to come back.
  const busy = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
  expect([busy.status, busy.body.error.code]).toEqual([503, "UNAVAILABLE"]);
  // Past it, one of theirs is closed, and the list is answered whole: long before the server would
  // close a connection that nothing moves on (REQUEST_TIMEOUT and 2 s more).
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const listed = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
  expect([listed.status, listed.body.items.length]).toEqual([200, 96]);
  for (const s of opened.splice(0)) s.destroy();
});
