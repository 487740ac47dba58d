/** A real node of the service, started in-process on a fresh DATA_DIR and a free port. */
import fs from "node:fs";
import { loadConfig } from "../../lib/config";
import { startNode, type RunningNode } from "../../app/node";
import { AdjustableClock } from "../../lib/clock";
import { tempDir } from "./temp";

export interface TestServer {
  url: string;
  node: RunningNode;
  dataDir: string;
  /** The node's clock: `clock.advance(ms)` makes tokens and invites expire without waiting. */
  clock: AdjustableClock;
  stop(): Promise<void>;
}

export { tempDir } from "./temp";

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = env.DATA_DIR ?? tempDir();
  const config = loadConfig({ PORT: "0", LOG_LEVEL: "error", DATA_DIR: dataDir, ...env });
  const clock = new AdjustableClock();
  const node = await startNode(config, { clock });
  return {
    url: `http://127.0.0.1:${node.port}/api/v1`,
    node,
    dataDir,
    clock,
    async stop() {
      await node.stop();
      if (!env.DATA_DIR) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
