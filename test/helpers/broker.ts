/**
 * A node's services on a broker with no transporter and no gateway, for tests of a rule that
 * belongs to one action: `as(caller).call(action, params)` is the call the gateway would make
 * for that caller's request, without HTTP in between.
 */
import fs from "node:fs";
import type { ServiceBroker } from "moleculer";
import { startNode } from "../../app/node";
import { AdjustableClock } from "../../lib/clock";
import { loadConfig } from "../../lib/config";
import type { Caller } from "../../lib/domain/types";
import { tempDir } from "./server";

export interface TestBroker {
  broker: ServiceBroker;
  clock: AdjustableClock;
  /** Calls an action as the caller an access token would name (none: a public call). */
  as(caller: Caller | null): { call<T = any>(action: string, params?: object): Promise<T> };
  stop(): Promise<void>;
}

export async function startBroker(services: string[], env: Record<string, string> = {}): Promise<TestBroker> {
  const dataDir = tempDir("vault-broker-");
  const config = loadConfig({ LOG_LEVEL: "error", DATA_DIR: dataDir, ...env });
  if (config.transporter) throw new Error("A broker test runs without a transporter");
  const clock = new AdjustableClock();
  const node = await startNode(config, { services, clock });
  return {
    broker: node.broker,
    clock,
    as: (caller) => ({ call: (action, params = {}) => node.broker.call(action, params, { meta: { user: caller } }) }),
    async stop() {
      await node.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
