/** Raw HTTP/1.1 over a socket, for tests of what the server does with clients that no library would be. */
import type net from "node:net";
import { sleep } from "./wait";

/** Everything the connection sends until it closes or falls quiet for a second; then it is destroyed. */
export async function readUntilQuiet(socket: net.Socket): Promise<string> {
  let text = "";
  socket.setEncoding("latin1");
  socket.on("data", (d: string) => (text += d));
  socket.resume();
  let last = -1;
  while (!socket.destroyed && !socket.readableEnded && last !== text.length) {
    last = text.length;
    await sleep(1_000);
  }
  socket.destroy();
  return text;
}

/** The status of each answer in `text`, in order. */
export const statusesIn = (text: string): number[] => [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
