/**
 * Every node's operations port (OPS_PORT), apart from the public API: probes and metrics.
 *
 * - `GET /livez`: 200 while the process answers at all.
 * - `GET /readyz`: 200 `{ status: "ready" }` when the node should get traffic; else 503
 *   `{ status: "not ready", reasons: [...] }`: while starting, while its store or NATS is
 *   unreachable, and while draining after SIGTERM.
 * - `GET /metrics`: Prometheus text (Moleculer's metrics and the service's own), when METRICS is on.
 *
 * It listens before the node starts (readiness says "starting" during migrations) and closes last.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface OpsHandlers {
  /** Why the node should not get traffic now; empty when it is ready. */
  notReadyBecause(): Promise<string[]>;
  /** The metrics text, or undefined when metrics are off. */
  metrics(): Promise<string | undefined>;
}

export class OpsServer {
  private constructor(private readonly server: http.Server) {}

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  static async start(port: number, host: string, handlers: OpsHandlers): Promise<OpsServer> {
    const server = http.createServer((req, res) => {
      req.resume();
      void answer(req, handlers).then(
        ({ status, type, body }) => {
          res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
          res.end(body);
        },
        () => {
          res.writeHead(500, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ status: "error" }));
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return new OpsServer(server);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

const JSON_TYPE = "application/json; charset=utf-8";

async function answer(req: http.IncomingMessage, handlers: OpsHandlers): Promise<{ status: number; type: string; body: string }> {
  const path = (req.url ?? "").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD")
    return { status: 405, type: JSON_TYPE, body: JSON.stringify({ status: "method not allowed" }) };
  if (path === "/livez") return { status: 200, type: JSON_TYPE, body: JSON.stringify({ status: "alive" }) };
  if (path === "/readyz") {
    const reasons = await handlers.notReadyBecause();
    return reasons.length === 0
      ? { status: 200, type: JSON_TYPE, body: JSON.stringify({ status: "ready" }) }
      : { status: 503, type: JSON_TYPE, body: JSON.stringify({ status: "not ready", reasons }) };
  }
  if (path === "/metrics") {
    const text = await handlers.metrics();
    if (text !== undefined) return { status: 200, type: "text/plain; version=0.0.4; charset=utf-8", body: text };
  }
  return { status: 404, type: JSON_TYPE, body: JSON.stringify({ status: "not found" }) };
}
