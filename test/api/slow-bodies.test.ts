/**
 * Slow or aimless chunk bodies must not deny files and sends to everyone else. A chunk PUT holds
 * one of ATTACHMENT_CONCURRENCY slots while its body arrives; a live probe filled all eight with
 * four free accounts sending at 4 bytes a second, and every other tenant's send opens and chunk
 * reads got 503 until the bodies' deadline. Two rules now stand in the way, each tested here
 * against the server as shipped, with the attack coming from other addresses than the reader's
 * (a trusted proxy's X-Forwarded-For), as it would:
 * - a body slower than the pace rule is cut (408) once another request waits for its slot;
 * - a PUT to an upload or send that is not the caller's is read in a pool of its own.
 */
import net from "node:net";
import { randomBytes, randomUUID } from "node:crypto";
import { MemoryPinStore, parseSendLink, VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { deriveSendKeys } from "../../protocol/formats/sends";
import { SLOW_BODY_GRACE_MS } from "../../lib/domain/vaults/fair-share";
import { Api, newOrg, type TestUser } from "../helpers/client";
import { killAllServers, startShippedServer, type ShippedServer } from "../helpers/process";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { sleep } from "../helpers/wait";

const MIB = 1024 * 1024;

let server: ShippedServer;
let api: Api;
let link: string;

beforeAll(async () => {
  server = await startShippedServer({ REGISTRATION_MODE: "open", SENDS: "on", TRUST_PROXY: "1" });
  api = new Api(server.url);
  const alice = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
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

interface SlowPut {
  /** The status the server answered (once it has), as text. */
  status(): string | undefined;
  stop(): void;
}

/** A PUT of a part announced as 1,000,000 bytes, sent `bytesPerTick` every `tickMs` from `address`. */
function slowPut(owner: TestUser, sendId: string, index: number, address: string, bytesPerTick: number, tickMs: number): SlowPut {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), "127.0.0.1");
  socket.on("error", () => undefined);
  let read = "";
  socket.on("data", (d: Buffer) => (read += d.toString("latin1")));
  socket.write(
    `PUT /api/v1/sends/${sendId}/parts/${index} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 1000000\r\nX-Forwarded-For: ${address}\r\n\r\n{"data":"`,
  );
  const tick = setInterval(() => socket.writable && socket.write("A".repeat(bytesPerTick)), tickMs);
  return {
    status: () => /^HTTP\/1\.1 (\d{3})/.exec(read)?.[1],
    stop: () => {
      clearInterval(tick);
      socket.destroy();
    },
  };
}

/** Four accounts, each in an organization of its own (what open registration gives anyone). */
const attackers = (): Promise<TestUser[]> => Promise.all([1, 2, 3, 4].map(async () => (await newOrg(api)).owner));

async function stopAll(puts: SlowPut[]): Promise<void> {
  for (const p of puts) p.stop();
  // The server sees the connections go and gives their slots back.
  await sleep(500);
}

test("bodies trickling at 4 bytes a second into real sends, from four addresses, are cut once a reader waits", async () => {
  const owners = await attackers();
  const sends = await Promise.all(owners.map(unfinishedSend));
  const puts = owners.flatMap((o, i) => [0, 1].map((index) => slowPut(o, sends[i]!, index, `10.0.0.${i + 1}`, 4, 1_000)));
  try {
    // Past the grace every body is given: from here on they are below the pace.
    await sleep(SLOW_BODY_GRACE_MS + 500);
    expect(await readerStatuses()).toEqual([200, 200]);
    await sleep(500);
    // The ones cut to make room were told why.
    expect(puts.map((p) => p.status()).filter((s) => s === "408").length).toBeGreaterThan(0);
  } finally {
    await stopAll(puts);
  }
});

test("bodies to sends that are not the caller's take none of the real uploads' slots, however fast they come", async () => {
  const owners = await attackers();
  // 64 KiB a second each: above the pace, so only the look at the target before the body can stop them.
  const puts = owners.flatMap((o, i) => [0, 1].map((index) => slowPut(o, randomUUID(), index, `10.0.1.${i + 1}`, 16 * 1024, 250)));
  try {
    await sleep(300);
    expect(await readerStatuses()).toEqual([200, 200]);
    expect(puts.map((p) => p.status()).filter((s) => s === "200" || s === "204")).toEqual([]);
  } finally {
    await stopAll(puts);
  }
});
