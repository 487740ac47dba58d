/**
 * A request refused before its body has all arrived is answered, and its connection closed. A
 * client still sending its body must be able to read that answer: the gateway ends its side,
 * drains what still arrives for a moment, then closes (lib/http/lingering-close.ts). Closed at
 * once, the client's next write met a reset, and a client that had not yet read the answer lost
 * it (EPIPE in place of a 400 for a 64 MiB body, now and then in CI). Against the server as shipped.
 */
import net from "node:net";
import { randomUUID } from "node:crypto";
import { LINGER_MS } from "../../lib/http/lingering-close";
import { killAllServers, startShippedServer, type ShippedServer } from "../helpers/process";
import { sleep } from "../helpers/wait";

let server: ShippedServer;

beforeAll(async () => {
  server = await startShippedServer();
});
afterAll(async () => {
  await server?.stop();
  killAllServers();
});

const PIECE = Buffer.alloc(64 * 1024, "a");

/**
 * A client that announces a 64 MiB body to `path` without a token (401 comes before the body is
 * read) and goes on sending it, reading nothing for `busyMs`, then reads while it still sends.
 * It answers what it read, how it ended (a write after the server's close fails), and when the
 * server closed the connection.
 */
async function sendingClient(path: string, busyMs: number) {
  const { port } = new URL(server.url);
  // Half-open allowed: the client does not close when the server ends its side, only the server's close ends it.
  const socket = net.connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true });
  // Paused before it connects: nothing is read until `busyMs` has passed.
  socket.pause();
  let read = "";
  let error: string | undefined;
  let closedAt: number | undefined;
  const start = Date.now();
  socket.on("data", (d: Buffer) => (read += d.toString("latin1")));
  socket.on("error", (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
  const closed = new Promise<void>((resolve) =>
    socket.on("close", () => {
      closedAt = Date.now() - start;
      resolve();
    }),
  );
  socket.write(
    `POST /api/v1${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`,
  );
  let sending = true;
  void (async () => {
    // Never the whole body: the request stays unfinished for as long as this sends.
    for (let sent = 0; sending && !socket.destroyed && sent < 60 * 1024 * 1024; sent += PIECE.length) {
      socket.write(PIECE);
      await sleep(5);
    }
  })();
  await sleep(busyMs);
  socket.resume();
  await Promise.race([closed, sleep(6 * LINGER_MS)]);
  sending = false;
  socket.destroy();
  return { status: /^HTTP\/1\.1 (\d{3})/.exec(read)?.[1], read, error, closedAt };
}

test.each([
  ["a route whose body is parsed, announced too large", "/vaults"],
  ["a route whose body is streamed to its action", `/vaults/${randomUUID()}/rekey`],
])("%s: a client still sending reads its answer, and the connection is closed soon after", async (_what, path) => {
  const r = await sendingClient(path, 500);
  // Read half a second after the answer went out: the connection was still draining, not reset.
  expect(r.status).toBe("401");
  expect(r.read).toContain('"code":"UNAUTHORIZED"');
  expect(r.read.toLowerCase()).toContain("connection: close");
  // The client went on sending for longer than this: the linger is bounded, it does not read a body to its end.
  expect(r.closedAt).toBeGreaterThanOrEqual(LINGER_MS - 100);
  expect(r.closedAt!).toBeLessThan(500 + LINGER_MS + 1_500);
});

test("a path that names nothing, sent with a body, is answered 404 the same way", async () => {
  const r = await sendingClient("/vaults/%", 500);
  expect(r.status).toBe("404");
  expect(r.closedAt!).toBeLessThan(500 + LINGER_MS + 1_500);
});
