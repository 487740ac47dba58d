/**
 * The benchmark's baseline: the product's gateway configuration and authentication (the same
 * mixin, the same token verification) in front of one action that answers a constant (the
 * product's response, given by bench/run.ts in BENCH_CONSTANT).
 * Not a route of the product; started only by the benchmark.
 *
 * BENCH_ROLE=gateway or constant runs one half, for the split baseline: the two processes meet
 * over NATS (TRANSPORTER) like the product's gateway and services. Unset: both in one process.
 */
import os from "node:os";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { brokerOptions } from "../lib/broker-options";
import { loadConfig } from "../lib/config";
import { AccessTokens } from "../lib/auth/access-tokens";
import { signingKeys } from "../lib/auth/secrets";
import { gatewayMixin } from "../mixins/gateway.mixin";

async function main(): Promise<void> {
  const config = loadConfig();
  const role = process.env.BENCH_ROLE ?? "both";
  const read: unknown = JSON.parse(process.env.BENCH_CONSTANT ?? "{}");
  const write: unknown = JSON.parse(process.env.BENCH_CONSTANT_WRITE ?? "{}");
  const tokens = new AccessTokens(signingKeys(config), config.accessTokenTtlSec);
  const broker = new ServiceBroker(brokerOptions(config, { nodeID: `baseline-${role}-${os.hostname()}-${process.pid}` }));
  if (role !== "constant") {
    broker.createService({
      name: "api",
      mixins: [
        gatewayMixin(config, tokens, [
          { method: "GET", path: "/health", action: "api.health", public: true },
          { method: "GET", path: "/bench/constant", action: "bench.constant" },
          { method: "POST", path: "/bench/constant", action: "bench.constantWrite" },
        ]),
      ],
      actions: { health: { handler: () => ({ status: "ok" }) } },
    } as ServiceSchema);
  }
  if (role !== "gateway") {
    broker.createService({
      name: "bench",
      // The constants are the product's own answers (GET /vaults, an item create), so both
      // servers send the same bytes and the ratio measures the work behind the gateway.
      actions: {
        constant: { handler: () => read },
        constantWrite: {
          handler(ctx) {
            ctx.meta.$statusCode = 201;
            return write;
          },
        },
      },
    });
  }
  await broker.start();
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
