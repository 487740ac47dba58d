/**
 * A connection's requests, one at a time (lib/http/one-at-a-time.ts), on a bare node:http server:
 * pipelined requests are handled in turn, never two at once; nothing behind a last answer is
 * handled; past MAX_WAITING the connection is cut off.
 */
import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import { MAX_WAITING, oneAtATime } from "../../../../lib/http/one-at-a-time";
import { sleep } from "../../../helpers/wait";

let server: http.Server;
let handled: string[] = [];
let inHandler = 0;
let mostAtOnce = 0;

beforeAll(async () => {
  server = http.createServer(
    oneAtATime((req, res) => {
      handled.push(req.url!);
      mostAtOnce = Math.max(mostAtOnce, ++inHandler);
      const close = req.url!.startsWith("/close");
      // Each answer takes a moment, so that handled at once they would overlap.
      setTimeout(() => {
        inHandler--;
        if (close) res.setHeader("Connection", "close");
        // Of no known length: to an HTTP/1.0 client Node then closes after it, and says so itself.
        if (req.url!.startsWith("/unsized")) res.write(req.url);
        res.end(req.url!.startsWith("/unsized") ? undefined : req.url);
      }, 20);
    }),
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  handled = [];
  mostAtOnce = 0;
});

/** Sends `paths` pipelined in one write; answers what came back before the connection closed or fell quiet. */
async function pipeline(paths: string[], version = "1.1", headers = ""): Promise<{ text: string; closed: boolean }> {
  const socket = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
  socket.on("error", () => undefined);
  let text = "";
  let closed = false;
  socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
  socket.on("close", () => (closed = true));
  socket.write(paths.map((p) => `GET ${p} HTTP/${version}\r\nHost: x\r\n${headers}\r\n`).join(""));
  let last = -1;
  while (!closed && last !== text.length) {
    last = text.length;
    await sleep(300);
  }
  socket.destroy();
  return { text, closed };
}

test("pipelined requests are handled in turn, never two at once, and answered in order", async () => {
  const paths = ["/a", "/b", "/c", "/d", "/e"];
  const { text } = await pipeline(paths);
  expect(handled).toEqual(paths);
  expect(mostAtOnce).toBe(1);
  expect([...text.matchAll(/\r\n\r\n(\/[a-e])/g)].map((m) => m[1])).toEqual(paths);
});

test("nothing sent behind an answer that closes the connection is handled", async () => {
  const { text, closed } = await pipeline(["/a", "/close", "/after-1", "/after-2"]);
  expect(handled).toEqual(["/a", "/close"]);
  expect(text).not.toContain("/after");
  expect(closed).toBe(true);
});

test("nor anything behind an answer Node closes the connection after on its own (HTTP/1.0 kept alive, no length)", async () => {
  const { text, closed } = await pipeline(["/unsized", "/after"], "1.0", "Connection: keep-alive\r\n");
  expect(handled).toEqual(["/unsized"]);
  expect(text).not.toContain("/after");
  expect(closed).toBe(true);
});

test(`a connection with more than ${MAX_WAITING} requests waiting is cut off`, async () => {
  const paths = Array.from({ length: MAX_WAITING + 5 }, (_, i) => `/n${i}`);
  const { closed } = await pipeline(paths);
  expect(closed).toBe(true);
  expect(handled.length).toBeLessThanOrEqual(1);
  // Another connection is served as before.
  expect((await pipeline(["/fine"])).text).toContain("/fine");
});
