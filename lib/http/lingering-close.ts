/**
 * A connection closed after an answer to a request whose body has not all arrived (refused early:
 * 401, 413 on the announced size, a body the streamed parser refused), closed so that its client
 * reads the answer.
 *
 * Node closes such a connection as soon as the answer is written. The client is often still
 * sending its body: the bytes that arrive after the close make the kernel answer with a reset,
 * and a client whose write fails (EPIPE) before it has read the answer reports the reset, not the
 * answer (a 64 MiB body refused at its first megabyte did, now and then). So, as web servers do
 * ("lingering close"), the gateway ends its side once the answer is out, then goes on reading and
 * dropping what still arrives, for up to `LINGER_MS`, before it closes the connection: the client
 * has read the answer by then, or is not reading at all. What arrives is discarded as it comes,
 * never held.
 */
import type http from "node:http";
import type net from "node:net";

/** How long a connection is read and drained after its answer before it is closed. */
export const LINGER_MS = 2_000;

/**
 * Marks `res`'s answer as its connection's last, and its connection to linger after it: Node's
 * close of the connection once the answer is written (`destroySoon`) becomes an end of the
 * gateway's side, and a close when the client ends its own or after `LINGER_MS`.
 */
export function lingerAfterAnswer(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.setHeader("Connection", "close");
  // What still comes of the body is read and dropped (Node's parser goes on reading it).
  req.resume();
  const socket = req.socket as net.Socket | null;
  if (!socket || socket.destroyed) return;
  socket.destroySoon = function lingeringClose(this: net.Socket) {
    const close = () => this.destroy();
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    this.once("end", close);
    this.once("close", () => clearTimeout(timer));
    this.end();
  };
}
