/**
 * The Moleculer way to run the service: moleculer-runner with dist/moleculer.config.js, started
 * exactly as the README says, embedded (every service file of dist/services in one process) and
 * split over NATS (the gateway in one process, `SERVICES=` the rest in another, on PostgreSQL and
 * Redis). A request goes through each service; the runner's stop closes the node cleanly.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Api, registerUser, rekeyBody, sharedVault, invite, type TestUser } from "../helpers/client";
import { encryptItem, newVaultKey, decryptItem } from "../helpers/crypto";
import { killAllServers, spawnServer, type ServerProcess } from "../helpers/process";
import { tempDir } from "../helpers/server";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres";
import { deleteStreams, NATS_URL } from "../helpers/nats";
import { REDIS_URL } from "../helpers/cluster";
import { eventually } from "../helpers/wait";
import { SERVICES } from "../../services";

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, "../..");
const RUNNER = path.join(ROOT, "node_modules/moleculer/bin/moleculer-runner.js");
const CONFIG = ["--config", path.join(ROOT, "dist/moleculer.config.js")];
const SERVICE_DIR = path.join(ROOT, "dist/services");

const children: ChildProcess[] = [];
afterAll(() => {
  killAllServers();
  for (const c of children) c.kill("SIGKILL");
});

/** A request through every service of the node(s) behind `api`; the names of the services it reached. */
async function throughEveryService(api: Api): Promise<Set<string>> {
  const reached = new Set<string>();
  const ok = (service: string, status: number, expected: number) => {
    expect(`${service} ${status}`).toBe(`${service} ${expected}`);
    reached.add(service);
  };
  ok("api", (await api.get("/health")).status, 200);
  const owner: TestUser = await registerUser(api); // auth: register and login
  reached.add("auth");
  const t = { token: owner.token };
  ok("users", (await api.get("/users/me", t)).status, 200);
  ok("orgs", (await api.get(`/orgs/${owner.orgId}`, t)).status, 200);
  const inv = await invite(api, owner, "member"); // invites
  reached.add("invites");
  const member = await registerUser(api, { inviteToken: inv.token, email: inv.email });
  const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]); // vaults, members
  reached.add("vaults");
  ok("members", (await api.get(`/vaults/${vaultId}/members`, t)).status, 200);
  const itemId = randomUUID();
  ok(
    "items",
    (await api.post(`/vaults/${vaultId}/items`, { ...t, body: encryptItem(vaultKey, vaultId, itemId, "pw", "site") })).status,
    201,
  );
  ok("attachments", (await api.post(`/vaults/${vaultId}/items/${itemId}/attachments`, { ...t, body: { size: 1 } })).status, 201);
  ok("sends", (await api.get("/sends", t)).status, 200);
  ok("members", (await api.delete(`/vaults/${vaultId}/members/${member.userId}`, t)).status, 200);
  const newKey = newVaultKey();
  const rekey = rekeyBody(newKey, owner, [owner], [encryptItem(newKey, vaultId, itemId, "pw", "site")]);
  ok("rekey", (await api.post(`/vaults/${vaultId}/rekey`, { ...t, body: rekey })).status, 204);
  expect(decryptItem(newKey, (await api.get(`/vaults/${vaultId}/items/${itemId}`, t)).body).data).toBe("pw");
  ok("factors", (await api.get("/users/me/factors", t)).status, 200);
  ok("recovery", (await api.get("/users/me/recovery/requests", t)).status, 200);
  ok("recovery", (await api.get("/emergency/grants", t)).status, 200);
  // The audit worker turns the events into the log that the audit service reads.
  await eventually("the rekey and the removal in the audit log", async () => {
    const log = await api.get(`/audit?orgId=${owner.orgId}&limit=100`, t);
    const types: string[] = log.status === 200 ? log.body.events.map((e: { type: string }) => e.type) : [];
    return types.includes("vault.rekeyed") && types.includes("vault.member.removed");
  });
  reached.add("audit").add("audit-worker");
  return reached;
}

test("embedded: `moleculer-runner --config dist/moleculer.config.js dist/services` runs every service in one process", async () => {
  const dataDir = tempDir();
  const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: "info" }, { script: RUNNER, args: [...CONFIG, SERVICE_DIR] });
  const reached = await throughEveryService(new Api(server.url));
  // The sweeper has no route: its start is in the log.
  expect(server.output()).toMatch(/Service 'sweeper' started/);
  expect([...reached, "sweeper"].sort()).toEqual(Object.keys(SERVICES).sort());
  // SIGTERM drains, stops the broker and closes the store (SQLite folds its write-ahead log back
  // into the database file when the last connection closes): exit 0, nothing left open.
  expect(fs.existsSync(path.join(dataDir, "vault.sqlite-wal"))).toBe(true);
  expect(await server.kill("SIGTERM")).toBe(0);
  expect(server.output()).toMatch(/ServiceBroker is stopped/);
  expect(fs.existsSync(path.join(dataDir, "vault.sqlite-wal"))).toBe(false);
  const again = await spawnServer({ DATA_DIR: dataDir }, { script: RUNNER, args: [...CONFIG, SERVICE_DIR] });
  const owners = await new Api(again.url).get("/health");
  expect(owners.status).toBe(200);
  await again.kill("SIGTERM");
});

describe("split over NATS", () => {
  let database: TestDatabase;
  const namespace = `runner-${randomBytes(4).toString("hex")}`;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
    await deleteStreams(namespace).catch(() => undefined);
  });

  test("`SERVICES=` picks a process's services: a gateway in one, the rest in another, each started by moleculer-runner", async () => {
    const env = {
      ...process.env,
      TRANSPORTER: NATS_URL,
      DATABASE_URL: database.url,
      REDIS_URL,
      NAMESPACE: namespace,
      JWT_SECRET: randomBytes(32).toString("base64"),
      DATA_DIR: tempDir(),
      LOG_LEVEL: "info",
    };
    const rest = Object.keys(SERVICES).filter((s) => s !== "api");
    const workers = spawn(process.execPath, [RUNNER, ...CONFIG], {
      env: { ...env, SERVICES: rest.join(",") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(workers);
    let out = "";
    workers.stdout!.on("data", (d) => (out += d));
    workers.stderr!.on("data", (d) => (out += d));
    // The gateway answers /health once every service is reachable over NATS.
    const gateway: ServerProcess = await spawnServer({ ...env, SERVICES: "api" } as Record<string, string>, {
      script: RUNNER,
      args: CONFIG,
      timeoutMs: 40_000,
    });
    const reached = await throughEveryService(new Api(gateway.url));
    expect(reached.size).toBe(Object.keys(SERVICES).length - 1);
    // The workers' process ran no gateway of its own; the gateway's ran no other service.
    expect(out).not.toMatch(/Service 'api' started/);
    expect(out).toMatch(/Service 'sweeper' started/);
    expect(gateway.output()).not.toMatch(/Service 'vaults' started/);
    expect(await gateway.kill("SIGTERM")).toBe(0);
    const code = await new Promise<number | null>((resolve) => {
      workers.once("exit", (c) => resolve(c));
      workers.kill("SIGTERM");
    });
    expect(code).toBe(0);
    expect(out).toMatch(/ServiceBroker is stopped/);
  });
});
