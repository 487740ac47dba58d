/**
 * Moleculer's NATS transporter, with a disconnect that always ends. Its own flushes, then closes;
 * after NATS has restarted under a running node, that flush can reject (NatsError DISCONNECT),
 * and the rejection skips the rest of the broker's stop: the middlewares' and the node's `stopped`
 * hooks, which close the store, the event queue and the other NATS connections. Here a failed
 * flush still closes the connection, and the stop goes on.
 */
import { Transporters } from "moleculer";

export class NatsTransporter extends Transporters.NATS {
  override async disconnect(): Promise<void> {
    try {
      await super.disconnect();
    } catch {
      const client = this.client as { close(): Promise<void> } | null;
      this.client = null;
      await client?.close().catch(() => undefined);
    }
  }
}
