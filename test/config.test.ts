/** Settings that decide the deployment: the split one needs what the embedded default does not. */
import { checkSplitDeployment, loadConfig } from "../lib/config";

const SECRET = Buffer.alloc(32, 7).toString("base64");

test("a split node refuses to start on the embedded store, without a shared secret, or with a non-NATS transporter", () => {
  expect(() => checkSplitDeployment(loadConfig({ TRANSPORTER: "nats://127.0.0.1:4222", JWT_SECRET: SECRET })))
    .toThrow(/needs a server database shared by every node: set DATABASE_URL/);
  expect(() => checkSplitDeployment(loadConfig({ TRANSPORTER: "nats://127.0.0.1:4222", DATABASE_URL: "postgres://x@h/db" })))
    .toThrow(/needs JWT_SECRET/);
  expect(() => checkSplitDeployment(loadConfig({ TRANSPORTER: "redis://127.0.0.1:6379", DATABASE_URL: "postgres://x@h/db", JWT_SECRET: SECRET })))
    .toThrow(/must be a NATS URL/);
  expect(() => checkSplitDeployment(loadConfig({ TRANSPORTER: "nats://127.0.0.1:4222", DATABASE_URL: "postgres://x@h/db", JWT_SECRET: SECRET })))
    .not.toThrow();
  // The embedded default needs none of them.
  expect(() => checkSplitDeployment(loadConfig({}))).not.toThrow();
});

test("pool size and namespace are checked at start", () => {
  expect(() => loadConfig({ PG_POOL_SIZE: "1" })).toThrow(/PG_POOL_SIZE must be an integer >= 2/);
  expect(() => loadConfig({ NAMESPACE: "a b" })).toThrow(/NAMESPACE/);
  expect(loadConfig({}).namespace).toBe("vault-service");
});

test("the operating settings: a wrong value is refused at start with the setting's name; the defaults switch nothing on", () => {
  expect(() => loadConfig({ LOG_FORMAT: "xml" })).toThrow(/LOG_FORMAT must be text or json/);
  expect(() => loadConfig({ METRICS: "yes" })).toThrow(/METRICS must be on or off/);
  expect(() => loadConfig({ TRACING_ZIPKIN_URL: "zipkin:9411" })).toThrow(/TRACING_ZIPKIN_URL must be an http/);
  expect(() => loadConfig({ DRAIN_DELAY: "soon" })).toThrow(/DRAIN_DELAY must be a duration/);
  expect(() => loadConfig({ OPS_PORT: "-1" })).toThrow(/OPS_PORT must be an integer/);
  expect(loadConfig({})).toMatchObject({ opsPort: undefined, metrics: true, logFormat: "text", tracingZipkinUrl: undefined, drainDelayMs: 0 });
  expect(loadConfig({ DRAIN_DELAY: "5s", TRACING_ZIPKIN_URL: "http://zipkin:9411/" })).toMatchObject({ drainDelayMs: 5_000, tracingZipkinUrl: "http://zipkin:9411" });
});
