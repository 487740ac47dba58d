/** Free TCP ports for the servers the tests and benchmarks start: one helper for all of them. */
import net from "node:net";

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * A port p with p to p+count-1 free (a cluster's gateways, then its operations ports). Below
 * Linux's ephemeral range (32768 and up), where outgoing connections to PostgreSQL, Redis and NATS
 * could take one between the check and the listen.
 */
export async function freePorts(count: number): Promise<number> {
  for (;;) {
    const p = 20_000 + Math.floor(Math.random() * 12_000);
    let free = true;
    for (let i = 0; i < count && free; i++) free = await portIsFree(p + i);
    if (free) return p;
  }
}

export const freePort = (): Promise<number> => freePorts(1);
