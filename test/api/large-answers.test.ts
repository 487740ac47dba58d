/**
 * Large answers (a send's parts, a file's chunks) that nobody reads, over many connections whose
 * client never takes the answers. Without a bound the gateway held every answer (about 1.4 MB
 * each) for as long as the connections stayed open: 50 connections of 6 part reads, by anyone
 * holding one send link, grew a server by 270 MB. A connection's requests are now handled one at a
 * time (test/api/pipelining.test.ts), and an address holds a share of the gateway's slots for
 * large answers; past it, a request waits its turn and is refused (429), and a connection that does
 * not take its answer within REQUEST_TIMEOUT is closed. Against the server as shipped
 * (lib/http/large-answers.ts).
 */
import net from "node:net";
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { MemoryPinStore, openSend, parseSendLink, VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { deriveSendKeys } from "../../protocol/formats/sends";
import { killAllServers, startShippedServer, type ShippedServer } from "../helpers/process";
import { readUntilQuiet, statusesIn } from "../helpers/raw-http";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { sleep } from "../helpers/wait";

const MIB = 1024 * 1024;
const REQUEST_TIMEOUT_MS = 8_000;
const CONNECTIONS = 30;

let server: ShippedServer;
let link: string;
let sent: Uint8Array<ArrayBuffer>;
let access: string;

beforeAll(async () => {
  server = await startShippedServer({ REGISTRATION_MODE: "open", SENDS: "on", REQUEST_TIMEOUT: String(REQUEST_TIMEOUT_MS) });
  const alice = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
  await alice.register({ email: "alice@example.test", password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  sent = new Uint8Array(randomBytes(2 * MIB + 1000));
  link = (await alice.sends.create({ file: { name: "big.bin", data: sent } })).link;
  const { sendId, secret } = parseSendLink(link)!;
  const res = await fetch(`${server.url}/sends/${sendId}/open`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ accessProof: toBase64((await deriveSendKeys(secret, sendId)).accessProof) }),
  });
  access = ((await res.json()) as { access: string }).access;
});
afterAll(async () => {
  await server?.stop();
  killAllServers();
});

/**
 * `count` connections that each ask for a part four times, pipelined, and read nothing until told
 * to: a part's answer or two fit in the sockets' buffers, the next one stays in the server.
 */
async function unreadReads(count: number): Promise<net.Socket[]> {
  const { port } = new URL(server.url);
  const { sendId } = parseSendLink(link)!;
  const body = JSON.stringify({ access });
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const socket = net.connect(Number(port), "127.0.0.1");
      socket.on("error", () => undefined);
      await once(socket, "connect");
      socket.pause();
      const read =
        `POST /api/v1/sends/${sendId}/parts/${1 + (i % 2)}/read HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      socket.write(read.repeat(4));
      return socket;
    }),
  );
}

test("part reads over many connections that do not read: the address's share is answered, the rest refused (429)", async () => {
  const sockets = await unreadReads(CONNECTIONS);
  // Past the slot's wait (2 s), the requests beyond the share are refused; read before REQUEST_TIMEOUT.
  await sleep(3_500);
  const statuses = (await Promise.all(sockets.map(async (s) => statusesIn(await readUntilQuiet(s))))).flat();
  expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  // The share (8 of 32 slots), and what the sockets' buffers took in meanwhile; not all 30.
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
});

test("a connection that does not take its answer is closed after REQUEST_TIMEOUT, and the slots come back", async () => {
  const sockets = await unreadReads(CONNECTIONS);
  const ended = sockets.map((socket) => once(socket, "end").then(() => true));
  // Nothing read past REQUEST_TIMEOUT: the server has closed the connections still holding an
  // answer by then. (A paused socket does not see its close: reading again, the client gets what
  // was sent, then the end.)
  await sleep(REQUEST_TIMEOUT_MS + 2_000);
  const outcomes = await Promise.all(
    sockets.map(async (socket, i) => {
      const statuses = statusesIn(await readUntilQuiet(socket));
      return { closed: await Promise.race([ended[i]!, sleep(0).then(() => false)]), answered: statuses.length };
    }),
  );
  // Each was answered whole (its answers fitted in the sockets' buffers) or closed; some were closed.
  expect(outcomes.filter((o) => !o.closed && o.answered < 4)).toEqual([]);
  expect(outcomes.filter((o) => o.closed).length).toBeGreaterThan(0);
  // Every slot was given back: the link's holder downloads the file whole, two at once.
  const opened = await Promise.all([openSend(link, { apiUrl: server.url }), openSend(link, { apiUrl: server.url })]);
  for (const o of opened) expect(Buffer.from(o.file!.data).equals(Buffer.from(sent))).toBe(true);
});
