/**
 * An HTTP server whose `close` ends: every connection is closed once its request in progress is
 * answered, and none is left open past `graceMs`.
 *
 * Node's `server.close()` stops listening and closes the connections idle at that moment, then
 * waits for the rest. A keep-alive connection with a request in progress stays open after its
 * answer, and a client that keeps sending on it (a page's polls, a proxy's pool) is served for as
 * long as it does: the stop, and with it a node's SIGTERM drain, never ends, and a stopped node
 * goes on answering. So once closing, every answer not yet begun says `Connection: close` (Node
 * then closes its connection after it), connections that fall idle are closed as they do (an
 * answer already begun before the close), and whatever is still open after `graceMs` is cut.
 */
import type http from "node:http";

/** How often connections that fell idle while closing are looked for. */
const IDLE_SWEEP_MS = 200;

export function closeAfterAnswers(server: http.Server, graceMs: number): void {
  let closing = false;
  const inProgress = new Set<http.ServerResponse>();
  // First of the server's listeners: before any handler can begin an answer.
  server.prependListener("request", (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) {
      res.shouldKeepAlive = false;
      return;
    }
    inProgress.add(res);
    res.once("close", () => inProgress.delete(res));
  });

  const close = server.close.bind(server);
  server.close = function closeAfterAnswering(callback?: (err?: Error) => void) {
    closing = true;
    for (const res of inProgress) if (!res.headersSent) res.shouldKeepAlive = false;
    inProgress.clear();
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    sweep.unref();
    cut.unref();
    close((err?: Error) => {
      clearInterval(sweep);
      clearTimeout(cut);
      callback?.(err);
    });
    return server;
  };
}
