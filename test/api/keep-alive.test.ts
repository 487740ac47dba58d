/**
 * Pooled keep-alive connections through the gateway (moleculer-web on Node's HTTP server): a client
 * holding a fixed pool of connections (undici's Agent, as Node's fetch) under bursts of requests,
 * with idle gaps around the gateway's keep-alive timeout, while the gateway or the client stalls
 * as on a loaded machine. No request may fail on a connection the gateway closed under it.
 * The client is its own process (test/helpers/keep-alive-client.mjs), the server the built one.
 * And a stop ends however busy a client keeps its connection (lib/http/closing-server.ts).
 */
import { execFile } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { Api, registerUser } from "../helpers/client";
import { killAllServers, spawnServer, type ServerProcess } from "../helpers/process";
import { tempDir } from "../helpers/server";
import { eventually } from "../helpers/wait";

jest.setTimeout(120_000);

const CLIENT = path.join(__dirname, "../helpers/keep-alive-client.mjs");
const CONNECTIONS = 8;
const BURST = 200;

let server: ServerProcess;
let token: string;

beforeAll(async () => {
  server = await spawnServer({ DATA_DIR: tempDir(), REGISTRATION_MODE: "open" });
  token = (await registerUser(new Api(server.url))).token;
});
afterAll(async () => {
  if (server) process.kill(server.child.pid!, "SIGCONT");
  await server?.kill("SIGTERM");
  killAllServers();
});

type Round =
  | { kind: "idle"; idleMs: number }
  | { kind: "client-stalled"; stallMs: number }
  | { kind: "server-stalled"; pid: number; sendAtMs: number; resumeAtMs: number };

/** The client's rounds, in its own process: each round's requests that failed, and why. */
async function pooledClient(rounds: Round[]): Promise<Array<{ round: Round; sent: number; failed: string[] }>> {
  const plan = { url: server.url, token, connections: CONNECTIONS, burst: BURST, rounds };
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [CLIENT, JSON.stringify(plan)], { timeout: 100_000 });
    return JSON.parse(stdout);
  } finally {
    process.kill(server.child.pid!, "SIGCONT");
  }
}

const failuresOf = (results: Awaited<ReturnType<typeof pooledClient>>) =>
  results.filter((r) => r.failed.length > 0).map((r) => ({ ...r.round, failed: r.failed.length, causes: [...new Set(r.failed)] }));

test("the gateway announces a keep-alive longer than the usual proxies' 60 s idle timeout", async () => {
  const res = await fetch(`${server.url}/health`);
  await res.arrayBuffer();
  expect(res.headers.get("connection")).toBe("keep-alive");
  expect(res.headers.get("keep-alive")).toBe("timeout=65");
});

test("a pool under bursts, idle around the gateway's keep-alive timeout between them: no request fails", async () => {
  const results = await pooledClient([4_500, 5_500, 6_500].map((idleMs) => ({ kind: "idle", idleMs })));
  expect(results.reduce((n, r) => n + r.sent, 0)).toBe(3 * BURST);
  expect(failuresOf(results)).toEqual([]);
});

test("the gateway stalled with the pool idle (a starved process): requests sent on the pool before its keep-alive ran out are answered", async () => {
  // Sent 1 and 2.5 s into the idle (the client's own pool keeps them for 3 s after a `timeout=5`),
  // read by the gateway only once it goes on, past 6 s: Node's 5 s default (and its second more)
  // closed the connections under them.
  const pid = server.child.pid!;
  const results = await pooledClient([
    { kind: "server-stalled", pid, sendAtMs: 2_500, resumeAtMs: 7_000 },
    { kind: "server-stalled", pid, sendAtMs: 1_000, resumeAtMs: 6_500 },
  ]);
  expect(failuresOf(results)).toEqual([]);
  expect((await new Api(server.url).get("/health")).status).toBe(200);
});

test("the client stalled (a loaded machine) for about the gateway's old keep-alive, then sending at once: no request fails", async () => {
  const results = await pooledClient([5_900, 6_000, 6_100].map((stallMs) => ({ kind: "client-stalled", stallMs })));
  expect(failuresOf(results)).toEqual([]);
});

/** A raw connection to the server, and every byte it has answered so far. */
async function rawConnection(url: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let answered = "";
  let ended = false;
  socket.on("data", (d: Buffer) => (answered += d.toString("latin1")));
  socket.on("close", () => (ended = true));
  socket.on("error", () => undefined);
  const answers = () => answered.split("HTTP/1.1 ").slice(1);
  return { socket, answers, ended: () => ended };
}

test("SIGTERM while a client keeps its keep-alive connection busy: the request in progress is answered with Connection: close, and the server exits", async () => {
  const own = await spawnServer({ DATA_DIR: tempDir(), REGISTRATION_MODE: "open" });
  try {
    const exited = new Promise<number | null>((resolve) => own.child.once("exit", resolve));
    const { pathname } = new URL(`${own.url}/health`);
    const health = `GET ${pathname} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    const c = await rawConnection(own.url);
    c.socket.write(health);
    await eventually("the first answer", () => c.answers().length === 1);
    expect(c.answers()[0]).toMatch(/^200 [^]*\r\nConnection: keep-alive\r\n/);
    // A request in progress (its headers half sent) when the stop begins: once no new connection is taken.
    c.socket.write(health.slice(0, -2));
    own.child.kill("SIGTERM");
    await eventually("the server takes no new connection", () =>
      fetch(`${own.url}/health`).then(
        () => false,
        () => true,
      ),
    );
    c.socket.write("\r\n");
    await eventually("the request in progress is answered", () => c.answers().length === 2);
    expect(c.answers()[1]).toMatch(/^200 [^]*\r\nConnection: close\r\n/);
    // The client goes on sending, as a page's polls do: nothing more is answered, and the process ends.
    const deadline = Date.now() + 15_000;
    let exitedYet = false;
    void exited.then(() => (exitedYet = true));
    while (!exitedYet && Date.now() < deadline) {
      if (!c.ended()) c.socket.write(health);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect([exitedYet, c.ended(), c.answers().length]).toEqual([true, true, 2]);
    expect(await exited).toBe(0);
  } finally {
    if (own.child.exitCode === null) own.child.kill("SIGKILL");
  }
});
