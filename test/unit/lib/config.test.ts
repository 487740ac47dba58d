/** Settings that decide the deployment: the split one needs what the embedded default does not. */
import fs from "node:fs";
import path from "node:path";
import { checkSplitDeployment, loadConfig, SETTINGS } from "../../../lib/config";
import { SETTINGS_DOC, envTemplate, readmeWithSettings } from "../../../lib/config-docs";

const SECRET = Buffer.alloc(32, 7).toString("base64");

test("a split node refuses to start on the embedded store, without a shared secret, or with a non-NATS transporter", () => {
  expect(() => checkSplitDeployment(loadConfig({ TRANSPORTER: "nats://127.0.0.1:4222", JWT_SECRET: SECRET }))).toThrow(
    /needs a server database shared by every node: set DATABASE_URL/,
  );
  expect(() => checkSplitDeployment(loadConfig({ TRANSPORTER: "nats://127.0.0.1:4222", DATABASE_URL: "postgres://x@h/db" }))).toThrow(
    /needs JWT_SECRET/,
  );
  expect(() =>
    checkSplitDeployment(loadConfig({ TRANSPORTER: "redis://127.0.0.1:6379", DATABASE_URL: "postgres://x@h/db", JWT_SECRET: SECRET })),
  ).toThrow(/must be a NATS URL/);
  expect(() =>
    checkSplitDeployment(loadConfig({ TRANSPORTER: "nats://127.0.0.1:4222", DATABASE_URL: "postgres://x@h/db", JWT_SECRET: SECRET })),
  ).not.toThrow();
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
  expect(loadConfig({})).toMatchObject({
    opsPort: undefined,
    metrics: true,
    logFormat: "text",
    tracingZipkinUrl: undefined,
    drainDelayMs: 0,
  });
  expect(loadConfig({ DRAIN_DELAY: "5s", TRACING_ZIPKIN_URL: "http://zipkin:9411/" })).toMatchObject({
    drainDelayMs: 5_000,
    tracingZipkinUrl: "http://zipkin:9411",
  });
});

describe("the settings table is the one source of the settings' documentation", () => {
  const root = path.join(__dirname, "../../..");

  test("the settings page's table and .env.template are the ones lib/config/ writes (npm run settings)", () => {
    const doc = fs.readFileSync(path.join(root, SETTINGS_DOC), "utf8");
    expect(readmeWithSettings(doc)).toBe(doc);
    expect(fs.readFileSync(path.join(root, ".env.template"), "utf8")).toBe(envTemplate());
  });

  test("every setting's default parses, and .env.template's values load as the defaults do", () => {
    const template = Object.fromEntries(
      envTemplate()
        .split("\n")
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => l.split("=", 2) as [string, string]),
    );
    expect(Object.keys(template).length).toBeGreaterThan(20);
    const { dataDir: _a, ...fromTemplate } = loadConfig(template);
    const { dataDir: _b, ...fromNothing } = loadConfig({});
    expect(fromTemplate).toEqual(fromNothing);
    // Every documented variable is one the config reads: unknown names would be silently ignored.
    for (const name of Object.keys(template)) expect(Object.values(SETTINGS).map((s) => s.env)).toContain(name);
  });

  test("a refused value names its setting and what it takes", () => {
    expect(() => loadConfig({ REGISTRATION_MODE: "closed" })).toThrow(/REGISTRATION_MODE must be invite, open or disabled, got "closed"/);
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL must be fatal, error, warn, info, debug or trace/);
    expect(() => loadConfig({ SCRYPT_COST: "20000" })).toThrow(/SCRYPT_COST must be a power of two/);
    expect(loadConfig({ SERVICES: "api, vaults," }).services).toEqual(["api", "vaults"]);
  });
});
