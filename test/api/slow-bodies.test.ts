/**
 * Slow or aimless bodies must not deny files, sends and rekeys to everyone else. A chunk PUT holds
 * one of ATTACHMENT_CONCURRENCY slots while its body arrives (a rekey, one of REKEY_CONCURRENCY);
 * live probes filled them all with four free accounts, first sending at 4 bytes a second, then just
 * above the pace and replacing each body as it ended. The rules that stand in the way, each tested
 * here against the server as shipped, with the attack coming from other addresses than the honest
 * client's (a trusted proxy's X-Forwarded-For), as it would:
 * - reads have slots of their own, which no upload holds;
 * - a body slower than the pace rule is cut (408) once another request waits for its slot;
 * - a body that has held its slot for its quantum gives way to a waiter of an organization holding fewer;
 * - a PUT to an upload or send that is not the caller's is read in a pool of its own;
 * - a large answer going out to a client that does not read gives way to another's download in turn.
 * REQUEST_TIMEOUT is 12 s here: a chunk's quantum is 4 s, a rekey's 8 s, a body's deadline 10.8 s.
 */
import net from "node:net";
import { randomBytes, randomUUID } from "node:crypto";
import { MemoryPinStore, openSend, parseSendLink, VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { deriveSendKeys } from "../../protocol/formats/sends";
import { Api, newOrg, type TestUser } from "../helpers/client";
import { killAllServers, startShippedServer, type ShippedServer } from "../helpers/process";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { sleep } from "../helpers/wait";

const MIB = 1024 * 1024;

let server: ShippedServer;
let api: Api;
let alice: VaultClient;
let link: string;

beforeAll(async () => {
  server = await startShippedServer({
    REGISTRATION_MODE: "open",
    SENDS: "on",
    TRUST_PROXY: "1",
    REQUEST_TIMEOUT: "12000",
  });
  api = new Api(server.url);
  alice = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
  await alice.register({ email: "alice@example.test", password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  link = (await alice.sends.create({ file: { name: "big.bin", data: new Uint8Array(randomBytes(2 * MIB + 1000)) } })).link;
});
afterAll(async () => {
  await server?.stop();
  killAllServers();
});

/** What a reader of alice's link gets, from the server's own address: the open's status, then a part read's. */
async function readerStatuses(): Promise<number[]> {
  const { sendId, secret } = parseSendLink(link)!;
  const post = (path: string, body: object) =>
    fetch(`${server.url}/sends/${sendId}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const opened = await post("/open", { accessProof: toBase64((await deriveSendKeys(secret, sendId)).accessProof) });
  if (opened.status !== 200) return [opened.status];
  const { access } = (await opened.json()) as { access: string };
  const part = await post("/parts/1/read", { access });
  await part.arrayBuffer();
  return [opened.status, part.status];
}

/** An unfinished send of `owner`'s, of three parts: a real target for its PUTs. */
async function unfinishedSend(owner: TestUser): Promise<string> {
  const sendId = randomUUID();
  const res = await api.post("/sends", {
    token: owner.token,
    body: { sendId, parts: 3, bytes: 3 * MIB, accessProof: toBase64(randomBytes(32)), ownerNote: toBase64(randomBytes(64)) },
  });
  expect(res.status).toBe(201);
  return sendId;
}

/** Where slow bodies go: a method and path, what the body announces, and how it starts. */
interface Target {
  method: "PUT" | "POST";
  path: string;
  declared: number;
  opening: string;
}

const partOf = (sendId: string, index: number): Target => ({
  method: "PUT",
  path: `/sends/${sendId}/parts/${index}`,
  declared: 1_300_000,
  opening: '{"data":"',
});
const rekeyOf = (vaultId: string): Target => ({
  method: "POST",
  path: `/vaults/${vaultId}/rekey`,
  declared: 27 * MIB,
  opening: '{"newKeys": [], "items": [{"itemId": "',
});

interface SlowBodies {
  /** Every answer the server gave them so far (status line and body, as text). */
  answers(): string[];
  stop(): void;
}

/**
 * Bodies sent to `target` as `owner` from `address`, `bytesPerTick` every `tickMs`, one at a time:
 * each is replaced by a new one as soon as it is answered, as an attacker keeping the slot would.
 */
function slowBodies(owner: TestUser, target: Target, address: string, bytesPerTick: number, tickMs: number): SlowBodies {
  const { port } = new URL(server.url);
  // What each connection was sent back so far, in order.
  const reads: string[] = [];
  let socket: net.Socket | undefined;
  let stopped = false;
  const open = () => {
    const s = (socket = net.connect(Number(port), "127.0.0.1"));
    const at = reads.push("") - 1;
    s.on("error", () => undefined);
    s.on("data", (d: Buffer) => (reads[at] += d.toString("latin1")));
    // The server lingers a moment on a connection it answered before the body's end: the next body goes once it is closed.
    s.on("close", () => !stopped && open());
    s.write(
      `${target.method} /api/v1${target.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${target.declared}\r\nX-Forwarded-For: ${address}\r\n` +
        `Connection: close\r\n\r\n${target.opening}`,
    );
  };
  open();
  const tick = setInterval(() => socket?.writable && socket.write("A".repeat(bytesPerTick)), tickMs);
  return {
    answers: () => reads.filter((r) => r !== ""),
    stop: () => {
      stopped = true;
      clearInterval(tick);
      socket?.destroy();
    },
  };
}

/** Four accounts, each in an organization of its own (what open registration gives anyone). */
const attackers = (): Promise<TestUser[]> => Promise.all([1, 2, 3, 4].map(async () => (await newOrg(api)).owner));

/** Two bodies into each of four accounts' own unfinished sends: every upload slot of the process (eight, two per user). */
async function holdEveryUploadSlot(net: string, bytesPerTick: number, tickMs: number): Promise<SlowBodies[]> {
  const owners = await attackers();
  const sends = await Promise.all(owners.map(unfinishedSend));
  const bodies = owners.flatMap((o, i) =>
    [0, 1].map((index) => slowBodies(o, partOf(sends[i]!, index), `${net}.${i + 1}`, bytesPerTick, tickMs)),
  );
  await sleep(300);
  return bodies;
}

async function stopAll(bodies: SlowBodies[]): Promise<void> {
  for (const b of bodies) b.stop();
  // The server sees the connections go and gives their slots back.
  await sleep(500);
}

const answersOf = (bodies: SlowBodies[]): string[] => bodies.flatMap((b) => b.answers());

/** alice sends a small file: the SDK's own upload, which sends a part again after a 408, 429 or 503. */
const aliceUploads = async (): Promise<string> =>
  (await alice.sends.create({ file: { name: "note.txt", data: new Uint8Array(randomBytes(20_000)) } })).link;

test("reads never wait for uploads: with every upload slot held at 4 bytes a second, a send's reader is answered at once", async () => {
  const bodies = await holdEveryUploadSlot("10.0.0", 4, 1_000);
  try {
    expect(await readerStatuses()).toEqual([200, 200]);
    // Nothing had to be cut for it.
    expect(answersOf(bodies)).toEqual([]);
  } finally {
    await stopAll(bodies);
  }
});

test("bodies trickling at 4 bytes a second are cut once another upload waits, and it lands", async () => {
  const bodies = await holdEveryUploadSlot("10.0.1", 4, 1_000);
  try {
    await expect(aliceUploads()).resolves.toContain("#");
    // The ones cut to make room were told why, before their quantum was up.
    expect(answersOf(bodies).filter((a) => a.startsWith("HTTP/1.1 408") && a.includes("slower than 32 KiB/s")).length).toBeGreaterThan(0);
    expect(answersOf(bodies).filter((a) => a.includes("another organization"))).toEqual([]);
  } finally {
    await stopAll(bodies);
  }
});

test("bodies just above the pace, kept going by four accounts, give way in turn to another organization's upload", async () => {
  // 40 KiB/s each, about 2.5 Mbit/s in all: the pace never cuts them; each would hold its slot to its deadline.
  const bodies = await holdEveryUploadSlot("10.0.2", 10 * 1024, 250);
  try {
    await expect(aliceUploads()).resolves.toContain("#");
    const cut = answersOf(bodies).filter((a) => a.startsWith("HTTP/1.1 408"));
    expect(cut.length).toBeGreaterThan(0);
    // Every one cut gave way to alice's organization, none for its pace or its deadline.
    for (const answer of cut) expect(answer).toContain("another organization");
  } finally {
    await stopAll(bodies);
  }
});

test("bodies to sends that are not the caller's take none of the real uploads' slots, however fast they come", async () => {
  const owners = await attackers();
  // 64 KiB a second each: above the pace, so only the look at the target before the body can stop them.
  const bodies = owners.flatMap((o, i) =>
    [0, 1].map((index) => slowBodies(o, partOf(randomUUID(), index), `10.0.3.${i + 1}`, 16 * 1024, 250)),
  );
  try {
    await sleep(300);
    // An upload of another organization gets a slot at once: its first PUT lands, no body had to give way.
    const { owner } = await newOrg(api);
    const sendId = await unfinishedSend(owner);
    const put = await api.put(`/sends/${sendId}/parts/0`, { token: owner.token, body: { data: toBase64(randomBytes(1000)) } });
    expect(put.status).toBe(204);
    expect(answersOf(bodies).filter((a) => /^HTTP\/1\.1 (200|204|408)/.test(a))).toEqual([]);
    // Their pool is full: a PUT to a send that is gone is told so, not asked to come back (503) as if the server were busy.
    const gone = await api.put(`/sends/${randomUUID()}/parts/0`, { token: owner.token, body: { data: toBase64(randomBytes(1000)) } });
    expect([gone.status, gone.body.error.code]).toEqual([404, "NOT_FOUND"]);
  } finally {
    await stopAll(bodies);
  }
});

test("rekey bodies just above the pace, into vaults that are not theirs, give way to another organization's rekey, which the SDK sends until it lands", async () => {
  const vault = await alice.vaults.create("Team", "shared");
  await alice.items.add(vault.vaultId, { name: "db", fields: { password: "hunter2" } });
  // Two organizations of two users hold the four rekey slots (two per organization, one per user).
  const orgs = [await newOrg(api, ["admin"]), await newOrg(api, ["admin"])];
  const callers = orgs.flatMap((o) => [o.owner, o.users[0]!]);
  const bodies = callers.map((u, i) => slowBodies(u, rekeyOf(randomUUID()), `10.0.4.${i + 1}`, 10 * 1024, 250));
  try {
    await sleep(300);
    // Refused for want of a slot at first (503), the SDK sends the same rekey again until it is read.
    await expect(alice.vaults.rekey(vault.vaultId)).resolves.toMatchObject({ keyVersion: 2, items: 1 });
    const cut = answersOf(bodies).filter((a) => a.startsWith("HTTP/1.1 408"));
    expect(cut.length).toBeGreaterThan(0);
    for (const answer of cut) expect(answer).toContain("another organization");
  } finally {
    await stopAll(bodies);
  }
});

describe("answers nobody reads", () => {
  // A server of its own with a longer REQUEST_TIMEOUT, 24 s: an answer's quantum is 8 s, and a
  // connection that has not taken its answer is closed at 24 s. The download below must land in
  // between, however slowly a loaded machine sets the attack up.
  const TIMEOUT_MS = 24_000;
  let own: ShippedServer;
  let ownLink: string;
  beforeAll(async () => {
    own = await startShippedServer({ SENDS: "on", TRUST_PROXY: "1", REQUEST_TIMEOUT: String(TIMEOUT_MS) });
    const bob = new VaultClient({ baseUrl: own.url, pins: new MemoryPinStore() });
    await bob.register({ email: "bob@example.test", password: SDK_PASSWORD, orgName: "Bobs", kdf: TEST_KDF, rsaBits: 2048 });
    ownLink = (await bob.sends.create({ file: { name: "big.bin", data: new Uint8Array(randomBytes(2 * MIB + 1000)) } })).link;
  });
  afterAll(() => own?.stop());

  test("answers that clients from four addresses never read give way in turn to another address's download", async () => {
    const { sendId, secret } = parseSendLink(ownLink)!;
    const { port } = new URL(own.url);
    const read = (address: string) =>
      fetch(`${own.url}/sends/${sendId}/parts/1/read`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": address },
        body,
      });
    const opened = await fetch(`${own.url}/sends/${sendId}/open`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "10.0.5.9" },
      body: JSON.stringify({ accessProof: toBase64((await deriveSendKeys(secret, sendId)).accessProof) }),
    });
    const body = JSON.stringify({ access: ((await opened.json()) as { access: string }).access });
    // Eight connections from each of four addresses (each address's share of the 32 slots for large
    // answers), each asking for parts six times over and reading nothing: a part or two fit in the
    // sockets' buffers, the next one is held by the server until its connection is closed.
    const started = Date.now();
    const sockets = Array.from({ length: 32 }, (_, i) => {
      const socket = net.connect(Number(port), "127.0.0.1");
      socket.on("error", () => undefined);
      socket.pause();
      const request =
        `POST /api/v1/sends/${sendId}/parts/${1 + (i % 2)}/read HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 10.0.5.${1 + (i % 4)}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      socket.write(request.repeat(6));
      return socket;
    });
    try {
      // Every slot is held once the first answers have filled the sockets' buffers: then another
      // address waits its turn, and gets 503.
      let status = 200;
      for (let k = 0; status === 200 && k < 20; k++) {
        await sleep(250);
        const probe = await read(`10.0.6.${k + 1}`);
        await probe.arrayBuffer();
        status = probe.status;
      }
      expect(status).toBe(503);
      // The link's holder downloads the file whole, though every slot was held by answers nobody
      // reads: they give way once they have had their quantum, long before the server closes them.
      const got = await openSend(ownLink, { apiUrl: own.url });
      expect(Buffer.from(got.file!.data).length).toBe(2 * MIB + 1000);
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS - 4_000);
    } finally {
      for (const s of sockets) s.destroy();
      await sleep(500);
    }
  });
});
