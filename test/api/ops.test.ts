/**
 * What an operator sees on a node's operations port (OPS_PORT) and in its logs: readiness while
 * starting, with the store or NATS away and while draining; the service's metrics after real
 * traffic; JSON log lines carrying the request's trace id; spans sent to a Zipkin collector.
 * The PostgreSQL and NATS it stops are its own (test/helpers/throwaway.ts), never the machine's.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { loadConfig } from "../../lib/config";
import { startNode, type RunningNode } from "../../app/node";
import { Api, invite, registerUser, rekeyBody, sharedVault } from "../helpers/client";
import { encryptItem, newVaultKey } from "../helpers/crypto";
import { createTestDatabase } from "../helpers/postgres";
import { throwawayNats, throwawayPostgres } from "../helpers/throwaway";
import { killAllServers, spawnServer } from "../helpers/process";
import { freePort } from "../helpers/ports";
import { startTestServer, tempDir } from "../helpers/server";
import { randomBytes, randomUUID } from "node:crypto";
import { eventually, sleep } from "../helpers/wait";

jest.setTimeout(120_000);
afterAll(() => killAllServers());

const SECRET = randomBytes(32).toString("base64");

async function probe(port: number, path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** Polls until `ok` holds for a probe's answer; fails with the last answer after `ms`. */
async function until(port: number, path: string, ok: (r: { status: number; body: any }) => boolean, timeoutMs = 15_000) {
  return eventually(
    `${path} to match`,
    async () => {
      const answer = await probe(port, path);
      return ok(answer) ? answer : undefined;
    },
    { timeoutMs },
  );
}

describe("readiness of a node of the split deployment", () => {
  test("503 while starting (migrations held), 200 once serving; 503 while PostgreSQL or NATS is down, 200 when back; liveness stays 200; a stop after it all closes everything", async () => {
    const [postgres, nats] = await Promise.all([throwawayPostgres(), throwawayNats()]);
    const db = await createTestDatabase(postgres.url);
    const namespace = `test-ops-${randomBytes(3).toString("hex")}`;
    const opsPort = await freePort();
    // Another process holds the migration lock: the node waits for it, as during a deploy.
    const holder = new pg.Client({ connectionString: db.url });
    holder.on("error", () => undefined);
    await holder.connect();
    await holder.query("SELECT pg_advisory_lock($1)", [0x7661756d]);
    let node: RunningNode | undefined;
    try {
      const config = loadConfig({
        PORT: "0",
        LOG_LEVEL: "fatal",
        DATA_DIR: tempDir(),
        OPS_PORT: String(opsPort),
        TRANSPORTER: nats.url,
        DATABASE_URL: db.url,
        JWT_SECRET: SECRET,
        NAMESPACE: namespace,
      });
      const starting = startNode(config, { services: ["vaults"] });
      const early = await until(opsPort, "/readyz", (r) => r.status !== 0);
      expect(early).toMatchObject({ status: 503, body: { status: "not ready", reasons: ["starting"] } });
      expect((await probe(opsPort, "/livez")).status).toBe(200);
      await sleep(500);
      expect((await probe(opsPort, "/readyz")).status).toBe(503);
      await holder.end();
      node = await starting;
      expect(await probe(opsPort, "/readyz")).toMatchObject({ status: 200, body: { status: "ready" } });

      try {
        await postgres.stop();
        await until(opsPort, "/readyz", (r) => r.status === 503 && r.body.reasons.includes("store unreachable"));
        expect((await probe(opsPort, "/livez")).status).toBe(200);
      } finally {
        await postgres.start();
      }
      await until(opsPort, "/readyz", (r) => r.status === 200);

      try {
        await nats.stop();
        await until(opsPort, "/readyz", (r) => r.status === 503 && r.body.reasons.includes("NATS unreachable"));
      } finally {
        await nats.start();
      }
      await until(opsPort, "/readyz", (r) => r.status === 200, 20_000);

      // A stop after the NATS restart still runs to its end: the store, the queue and the ops port
      // are closed (Moleculer's own NATS disconnect fails after a restart and used to cut it short).
      const stopping = node;
      node = undefined;
      await stopping.stop();
      await expect(probe(opsPort, "/livez")).rejects.toThrow();
    } finally {
      await holder.end().catch(() => undefined);
      await node?.stop();
      // The database goes with its cluster.
      await Promise.all([postgres.destroy(), nats.destroy()]);
    }
  });
});

test("SIGTERM with DRAIN_DELAY: readiness turns 503 at once while the API still serves, then the process stops cleanly", async () => {
  const opsPort = await freePort();
  const server = await spawnServer({ DATA_DIR: tempDir(), OPS_PORT: String(opsPort), DRAIN_DELAY: "2s" });
  expect((await probe(opsPort, "/readyz")).status).toBe(200);
  const exited = server.kill("SIGTERM");
  await until(opsPort, "/readyz", (r) => r.status === 503, 1_000).then((r) =>
    expect(r.body).toEqual({ status: "not ready", reasons: ["draining"] }),
  );
  expect((await fetch(`${server.url}/health`)).status).toBe(200);
  expect(await exited).toBe(0);
});

describe("metrics", () => {
  test("after real traffic: requests by route and status, invites, login failures, rate limits, rekeys, the audit worker, and Moleculer's own", async () => {
    const opsPort = await freePort();
    const server = await startTestServer({ OPS_PORT: String(opsPort), LOGIN_MAX_FAILURES: "2" });
    try {
      const api = new Api(server.url);
      const owner = await registerUser(api);
      const inv = await invite(api, owner, "member");
      await registerUser(api, { inviteToken: inv.token, email: inv.email });
      for (let i = 0; i < 3; i++)
        await api.post("/auth/login", { body: { email: owner.email, authHash: randomBytes(32).toString("base64") } });
      const { vaultId, vaultKey } = await sharedVault(api, owner);
      const ids = [randomUUID(), randomUUID()];
      for (const id of ids)
        expect(
          (await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, id, "d", "n") })).status,
        ).toBe(201);
      const newKey = newVaultKey();
      const items = ids.map((id) => encryptItem(newKey, vaultId, id, "d2", "n2"));
      expect(
        (await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner], items) })).status,
      ).toBe(204);
      await sleep(500); // the audit worker's batch

      const { status, text } = await probe(opsPort, "/metrics");
      expect(status).toBe(200);
      const value = (name: string, labels: Record<string, string> = {}) => {
        const line = text
          .split("\n")
          .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
        return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
      };
      expect(value("vault_http_requests_total", { route: "/api/v1/vaults/:vaultId/items", method: "POST", status: "201" })).toBe(2);
      expect(value("vault_http_requests_total", { route: "/api/v1/auth/login", status: "401" })).toBe(2);
      expect(value("vault_http_requests_total", { route: "/api/v1/auth/login", status: "429" })).toBe(1);
      expect(value("vault_http_request_duration_count", { route: "/api/v1/vaults/:vaultId/items" })).toBe(2);
      expect(value("vault_invites_created_total")).toBe(1);
      expect(value("vault_invites_redeemed_total")).toBe(1);
      expect(value("vault_login_failures_total")).toBe(2);
      expect(value("vault_rate_limited_total", { limit: "login" })).toBe(1);
      expect(value("vault_rekeys_total")).toBe(1);
      expect(value("vault_rekey_items_sum")).toBe(2);
      expect(value("vault_audit_events_pending")).toBe(0);
      expect(value("vault_audit_lag")).toBeGreaterThanOrEqual(0);
      expect(value("vault_audit_lag")).toBeLessThan(5);
      expect(value("moleculer_request_total", { action: "items.create" })).toBe(2);
      expect(value("moleculer_request_time_count", { action: "vaults.create" })).toBe(1);
      // Each series once: Moleculer's own per-call middleware is replaced, not doubled.
      expect(text.match(/^# TYPE moleculer_request_total /gm)).toHaveLength(1);
      expect(text).not.toContain("moleculer_request_levels");
      // Moleculer's process figures are there.
      expect(value("process_memory_heap_size_used")).toBeGreaterThan(0);
      expect(text).not.toContain("process_arguments");
      // No token, hash or email in the labels.
      expect(text).not.toContain(owner.token);
      expect(text).not.toContain(owner.email);
    } finally {
      await server.stop();
    }
  });

  test("METRICS=off: /metrics is 404, the probes still answer", async () => {
    const opsPort = await freePort();
    const server = await startTestServer({ OPS_PORT: String(opsPort), METRICS: "off" });
    try {
      expect((await probe(opsPort, "/metrics")).status).toBe(404);
      expect((await probe(opsPort, "/readyz")).status).toBe(200);
      expect((await probe(opsPort, "/livez")).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

test("LOG_FORMAT=json: every line is one JSON object, and each line written for a request carries its id as traceId; no token reaches the log", async () => {
  const server = await spawnServer({ DATA_DIR: tempDir(), LOG_FORMAT: "json", LOG_LEVEL: "debug", REGISTRATION_MODE: "open" });
  const api = new Api(server.url);
  const owner = await registerUser(api);
  const requestId = randomBytes(8).toString("hex");
  const res = await fetch(`${server.url}/vaults`, { headers: { authorization: `Bearer ${owner.token}`, "x-request-id": requestId } });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-request-id")).toBe(requestId);
  // A request without an id gets one, echoed.
  expect((await fetch(`${server.url}/health`)).headers.get("x-request-id")).toMatch(/^[0-9a-f]{16}$/);
  await sleep(200);
  await server.kill("SIGTERM");
  const lines = server
    .output()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  for (const line of lines) expect(Object.keys(line)).toEqual(expect.arrayContaining(["time", "level", "node", "module", "msg"]));
  const ofRequest = lines.filter((l) => l.traceId === requestId);
  expect(ofRequest.length).toBeGreaterThan(1);
  expect(new Set(ofRequest.map((l) => l.module)).size).toBeGreaterThan(1);
  expect(ofRequest.every((l) => l.requestId === requestId)).toBe(true);
  // Every line that mentions the request was written in its scope.
  expect(lines.filter((l) => String(l.msg).includes(requestId)).every((l) => l.traceId === requestId)).toBe(true);
  expect(server.output()).not.toContain(owner.token);
  expect(server.output()).not.toContain(owner.bundle.authHash);
});

test("TRACING_ZIPKIN_URL: the gateway's and the service's spans share the request's id as trace id, and carry no params", async () => {
  const spans: any[] = [];
  const bodies: string[] = [];
  const collector = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.url === "/api/v2/spans") {
        bodies.push(body);
        spans.push(...JSON.parse(body));
      }
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  try {
    const zipkin = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const server = await spawnServer({ DATA_DIR: tempDir(), TRACING_ZIPKIN_URL: zipkin, REGISTRATION_MODE: "open" });
    const api = new Api(server.url);
    const owner = await registerUser(api);
    const traceId = randomBytes(8).toString("hex");
    const res = await fetch(`${server.url}/vaults`, { headers: { authorization: `Bearer ${owner.token}`, "x-request-id": traceId } });
    expect(res.status).toBe(200);
    const end = Date.now() + 10_000;
    while (!spans.some((s) => s.traceId === traceId && s.name.includes("vaults.list")) && Date.now() < end) await sleep(200);
    await server.kill("SIGTERM");
    const ofRequest = spans.filter((s) => s.traceId === traceId);
    // The gateway's span (moleculer-web names it by route), and the action it called.
    const root = ofRequest.find((s) => s.name === "GET /api/v1/vaults");
    expect(root).toBeDefined();
    expect(root.parentId).toBeFalsy();
    expect(ofRequest.find((s) => s.name.includes("vaults.list")).parentId).toBe(root.id);
    // The gateway's span has the method and URL (its name too); no span has any other param or meta.
    const tagged = ofRequest.map((s) => [
      s.name,
      Object.keys(s.tags)
        .filter((k) => k.startsWith("params") || k.startsWith("meta"))
        .sort(),
    ]);
    expect(tagged).toEqual(ofRequest.map((s) => [s.name, s === root ? ["params.req.method", "params.req.url"] : []]));
    const all = bodies.join("");
    expect(all).not.toContain(owner.token);
    expect(all).not.toContain(owner.bundle.authHash);
    expect(all).not.toContain(owner.bundle.encryptedPrivateKey);
  } finally {
    collector.close();
  }
});
