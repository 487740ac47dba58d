/**
 * The benchmark's baseline: the product's gateway configuration and authentication (the same
 * mixin, the same token verification) in front of one action that answers a constant (the
 * product's response, given by bench/run.ts in BENCH_CONSTANT).
 * Not a route of the product; started only by bench/run.ts.
 */
import os from "node:os";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { brokerOptions } from "../moleculer.config";
import { loadConfig } from "../lib/config";
import { AccessTokens } from "../lib/auth/access-tokens";
import { loadOrCreateSecret } from "../lib/auth/secrets";
import { gatewayMixin } from "../mixins/gateway.mixin";

async function main(): Promise<void> {
  const config = loadConfig();
  const constant: unknown = JSON.parse(process.env.BENCH_CONSTANT ?? "{}");
  const tokens = new AccessTokens(loadOrCreateSecret(config.jwtSecret, config.dataDir), config.accessTokenTtlSec);
  const broker = new ServiceBroker(brokerOptions(config, { nodeID: `baseline-${os.hostname()}-${process.pid}` }));
  broker.createService({
    name: "api",
    mixins: [gatewayMixin(config, tokens, [
      { method: "GET", path: "/health", action: "api.health", public: true },
      { method: "GET", path: "/bench/constant", action: "bench.constant" },
    ])],
    actions: { health: { handler: () => ({ status: "ok" }) } },
  } as ServiceSchema);
  broker.createService({
    name: "bench",
    // The constant is the product's own GET /vaults answer (bench/run.ts passes it), so both
    // servers send the same bytes and the ratio measures the work behind the gateway.
    actions: { constant: { handler: () => constant } },
  });
  await broker.start();
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
