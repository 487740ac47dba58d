/**
 * A connection's requests handled one at a time: a request pipelined behind another waits, not
 * handled, until the answer before it has gone out to the client.
 *
 * Node handles every request it has parsed at once, however many a client pipelined in one
 * write, and holds each answer until the client reads the ones before it. A client that sends
 * requests and reads nothing makes the server build and keep every answer: 50 connections of 200
 * pipelined requests for the web vault's script (public, no account) grew a server by 1.5 GB and
 * 10,000 open files in five seconds, and `GET /openapi.json` by 0.9 GB more. Handled in turn, a
 * connection holds one answer at most, and an answer that stops going out (its client not
 * reading) holds it only until the server's idle deadline closes the connection (`timeout` in the
 * gateway's server). A client with more than `MAX_WAITING` requests waiting on one connection is
 * cut off: no browser or HTTP library pipelines that deep. Nothing sent behind an answer that
 * closes its connection (`Connection: close`: an early refusal, a client's own close, HTTP/1.0)
 * is handled: its sender will not read the answer, and the request must not take effect.
 */
import type http from "node:http";
import type net from "node:net";

/** Requests one connection may have waiting behind the one being answered. */
export const MAX_WAITING = 16;

interface Turns {
  busy: boolean;
  /** An answer said it was the connection's last (`Connection: close`): nothing after it is handled. */
  ended: boolean;
  waiting: Array<[http.IncomingMessage, http.ServerResponse]>;
}

/**
 * Whether an answer is its connection's last: it says `Connection: close`, or Node will close after
 * it (`_last`: Node's own mark, set as it writes the head, also where it adds the close itself, as
 * for an HTTP/1.0 answer of no known length).
 */
const isLast = (res: http.ServerResponse): boolean =>
  !res.shouldKeepAlive ||
  (res as unknown as { _last?: boolean })._last === true ||
  /(^|,)\s*close\s*(,|$)/i.test(String(res.getHeader("connection") ?? ""));

/** `handler`, called for one request of a connection at a time, in the order they came. */
export function oneAtATime(handler: http.RequestListener): http.RequestListener {
  const byConnection = new WeakMap<net.Socket, Turns>();

  const run = (turns: Turns, req: http.IncomingMessage, res: http.ServerResponse) => {
    turns.busy = true;
    // 'close' comes once the answer has gone out whole, or its connection has gone.
    res.once("close", () => {
      turns.busy = false;
      // After a last answer, the requests sent behind it are not handled (RFC 9112, 9.6).
      if (isLast(res)) turns.ended = true;
      const next = turns.ended ? undefined : turns.waiting.shift();
      if (next && !req.socket.destroyed) run(turns, ...next);
    });
    handler(req, res);
  };

  return (req, res) => {
    const socket = req.socket;
    let turns = byConnection.get(socket);
    if (!turns) {
      const created: Turns = { busy: false, ended: false, waiting: [] };
      byConnection.set(socket, (turns = created));
      socket.once("close", () => (created.waiting = []));
    }
    if (turns.ended) return;
    if (!turns.busy) return run(turns, req, res);
    if (turns.waiting.length >= MAX_WAITING) return void socket.destroy();
    turns.waiting.push([req, res]);
  };
}
