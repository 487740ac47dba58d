/**
 * Requests pipelined on a connection whose client reads nothing. Node handled every request it
 * had parsed at once and held each answer until the client read the ones before it: 50
 * connections of 200 requests for the web vault's script (public, no account) grew a server by
 * 1.5 GB and 10,000 open files in five seconds. Now a connection's requests are handled one at a
 * time (lib/http/one-at-a-time.ts), a connection with more than 16 waiting is cut off, one
 * whose answer stops going out is closed, and nothing sent behind an answer that closes the
 * connection is handled. Against the server as shipped.
 */
import fs from "node:fs";
import net from "node:net";
import { once } from "node:events";
import { MAX_WAITING } from "../../lib/http/one-at-a-time";
import { ANSWER_GRACE_MS } from "../../mixins/gateway.mixin";
import { Api, newOrg, type TestUser } from "../helpers/client";
import { killAllServers, startShippedServer, type ShippedServer } from "../helpers/process";
import { readUntilQuiet, statusesIn } from "../helpers/raw-http";
import { sleep } from "../helpers/wait";

const REQUEST_TIMEOUT_MS = 3_000;

let server: ShippedServer;
let script: string;
let owner: TestUser;

beforeAll(async () => {
  server = await startShippedServer({ REQUEST_TIMEOUT: String(REQUEST_TIMEOUT_MS) });
  const origin = new URL(server.url).origin;
  // The web vault's largest script, as its page names it.
  const page = await (await fetch(`${origin}/`)).text();
  const scripts = [...page.matchAll(/src="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const sizes = await Promise.all(scripts.map(async (s) => (await (await fetch(`${origin}${s}`)).arrayBuffer()).byteLength));
  script = scripts[sizes.indexOf(Math.max(...sizes))]!;
  expect(Math.max(...sizes)).toBeGreaterThan(300_000);
  ({ owner } = await newOrg(new Api(server.url)));
});
afterAll(async () => {
  await server?.stop();
  killAllServers();
});

const pid = () => server.process.child.pid!;
const rssMiB = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid()}/status`, "utf8"))![1]) / 1024;
const openFiles = () => fs.readdirSync(`/proc/${pid()}/fd`).length;

/** A connection that sends `requests` at once and reads nothing until told to. */
async function pipelined(requests: string[]): Promise<net.Socket> {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), "127.0.0.1");
  socket.on("error", () => undefined);
  await once(socket, "connect");
  socket.pause();
  socket.write(requests.join(""));
  return socket;
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n`;

test("50 connections of pipelined script requests that read nothing: memory and open files stay flat, and they are closed", async () => {
  const rss = rssMiB();
  const files = openFiles();
  const sockets = await Promise.all(Array.from({ length: 50 }, () => pipelined(Array.from({ length: MAX_WAITING }, () => get(script)))));
  await sleep(2_000);
  // One answer in the making per connection: its socket and at most its one file.
  expect(openFiles() - files).toBeLessThanOrEqual(2 * 50 + 5);
  // Handled at once, 50 x 16 answers of the script (up to 1.2 MB each) took hundreds of MB.
  expect(rssMiB() - rss).toBeLessThan(120);
  const closed = sockets.map((s) => once(s, "close"));
  // An answer that stops going out: the connection is closed within twice the idle deadline.
  await sleep(2 * (REQUEST_TIMEOUT_MS + ANSWER_GRACE_MS) + 1_000);
  for (const s of sockets) s.resume();
  await Promise.race([Promise.all(closed), sleep(5_000).then(() => Promise.reject(new Error("connections still open")))]);
  expect(openFiles()).toBeLessThanOrEqual(files + 2);
}, 60_000);

test("pipelined requests a client reads are all answered, in order", async () => {
  const paths = ["/api/v1/health", "/api/v1/nowhere", "/api/v1/health", "/", "/api/v1/health"];
  const text = await readUntilQuiet(await pipelined(paths.map(get)));
  expect(statusesIn(text)).toEqual([200, 404, 200, 200, 200]);
});

test(`a connection with more than ${MAX_WAITING} requests waiting is cut off`, async () => {
  const socket = await pipelined(Array.from({ length: MAX_WAITING + 10 }, () => get(script)));
  const closed = once(socket, "close").then(() => true);
  await sleep(500);
  socket.resume();
  socket.on("data", () => undefined);
  expect(await Promise.race([closed, sleep(5_000).then(() => false)])).toBe(true);
  // The server serves on.
  expect((await fetch(`${server.url}/health`)).status).toBe(200);
});

// The first is the gateway's own close (an early refusal lingers, its socket still open); after the
// other two Node itself reads no further, and this holds that the gateway's queue keeps it so.
test.each([
  ["a path that names nothing (404, the connection closed)", "GET /api/v1/vaults/% HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"],
  ["the client's own Connection: close", "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"],
  ["an HTTP/1.0 request", "GET /api/v1/health HTTP/1.0\r\n\r\n"],
])("a request sent behind an answer that closes the connection is not handled: after %s", async (_what, first) => {
  const email = `pipelined-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`;
  const body = JSON.stringify({ email, role: "member" });
  const invite =
    `POST /api/v1/invites HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const text = await readUntilQuiet(await pipelined([first, invite]));
  // One answer, and the invite behind it never made: its sender could not have read that it was.
  expect(statusesIn(text)).toHaveLength(1);
  await sleep(500);
  const listed = await fetch(`${server.url}/invites?orgId=${owner.orgId}`, { headers: { authorization: `Bearer ${owner.token}` } });
  expect(listed.status).toBe(200);
  expect(JSON.stringify(await listed.json())).not.toContain(email);
});
