/**
 * The Kubernetes manifests (deploy/k8s): valid against the Kubernetes API schemas, complete (one
 * Deployment per service, probes on the operations port, resources), generated ones up to date,
 * and their settings accepted by the server's own settings parser.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { parse, parseAllDocuments } from "yaml";
import { renderServices } from "../../deploy/k8s/generate";
import { loadConfig } from "../../lib/config";
import { SERVICES } from "../../services";
import { NODE_FLAGS, START_ENV } from "../../lib/ops/start-flags";
import { tempDir } from "../helpers/server";

const DIR = path.resolve(__dirname, "../../deploy/k8s");
const VALIDATOR = path.join(__dirname, "../helpers/validate-k8s.mjs");

const validate = (files: string[]): Array<{ file: string; kind: string; name: string; error: string | null }> =>
  JSON.parse(execFileSync(process.execPath, [VALIDATOR, ...files], { encoding: "utf8" }));

const kustomization = parse(fs.readFileSync(path.join(DIR, "kustomization.yaml"), "utf8"));
const files: string[] = kustomization.resources.map((r: string) => path.join(DIR, r));
const manifests = files.flatMap((f) =>
  parseAllDocuments(fs.readFileSync(f, "utf8"))
    .map((d) => d.toJS())
    .filter(Boolean),
);
const deployments = manifests.filter((m) => m.kind === "Deployment");

test("services.yaml is what `npm run k8s` generates from the service list", () => {
  expect(fs.readFileSync(path.join(DIR, "services.yaml"), "utf8")).toBe(renderServices());
});

test("every manifest the kustomization lists exists and is valid against the Kubernetes API schemas", () => {
  for (const f of files) expect(fs.existsSync(f)).toBe(true);
  const results = validate(files);
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(manifests.length);
});

test("the validator refuses a broken manifest (so the test above can fail)", () => {
  const broken = path.join(tempDir(), "broken.yaml");
  const deployment = structuredClone(deployments[0]);
  deployment.spec.replicas = "two";
  delete deployment.spec.template.spec.containers[0].name;
  fs.writeFileSync(broken, JSON.stringify(deployment));
  const [result] = validate([broken]);
  expect(result!.error).toMatch(/replicas|name/);
});

test("one Deployment per service, each with readiness and liveness on the operations port, resource requests and a memory limit", () => {
  expect(deployments.map((d) => d.spec.template.spec.containers[0].env.find((e: any) => e.name === "SERVICES").value).sort()).toEqual(
    Object.keys(SERVICES).sort(),
  );
  for (const d of deployments) {
    const [c] = d.spec.template.spec.containers;
    expect(c.ports.find((p: any) => p.name === "ops").containerPort).toBe(9100);
    expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "ops" });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/livez", port: "ops" });
    expect(c.resources.requests.cpu).toBeDefined();
    expect(c.resources.requests.memory).toBeDefined();
    expect(c.resources.limits.memory).toBeDefined();
    // Long enough for DRAIN_DELAY and the in-flight requests after it.
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(20);
  }
});

test("NATS runs JetStream on a persistent volume; each autoscaler targets a Deployment that exists", () => {
  const nats = manifests.find((m) => m.kind === "StatefulSet" && m.metadata.name === "nats");
  expect(nats.spec.template.spec.containers[0].args).toEqual(expect.arrayContaining(["-js", "-sd", "/data"]));
  expect(nats.spec.volumeClaimTemplates[0].metadata.name).toBe("data");
  const hpas = manifests.filter((m) => m.kind === "HorizontalPodAutoscaler");
  expect(hpas.length).toBeGreaterThan(0);
  for (const h of hpas) expect(deployments.map((d) => d.metadata.name)).toContain(h.spec.scaleTargetRef.name);
});

test("the ConfigMap's and the example Secret's settings are accepted by the server's settings parser", () => {
  const config = manifests.find((m) => m.kind === "ConfigMap").data;
  const secret = manifests.find((m) => m.kind === "Secret").stringData;
  const settings = loadConfig({ ...config, ...secret, JWT_SECRET: randomBytes(32).toString("base64") });
  expect(settings).toMatchObject({ opsPort: 9100, logFormat: "json", drainDelayMs: 5_000, transporter: "nats://nats:4222" });
});

test("the server's process starts the same way in `npm start`, the Dockerfile and every Deployment (lib/ops/start-flags.ts)", () => {
  const root = path.resolve(__dirname, "../..");
  const scripts = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).scripts as Record<string, string>;
  const envPrefix = Object.entries(START_ENV).map(([k, v]) => `${k}=${v}`);
  for (const name of ["start", "dev"]) {
    const words = scripts[name]!.split(" && ").at(-1)!.split(" ");
    const node = words.indexOf("node");
    expect([name, words.slice(0, node), words.slice(node + 1, node + 1 + NODE_FLAGS.length)]).toEqual([name, envPrefix, [...NODE_FLAGS]]);
  }
  const dockerfile = fs.readFileSync(path.join(root, "Dockerfile"), "utf8");
  for (const [k, v] of Object.entries(START_ENV)) expect(dockerfile).toMatch(new RegExp(`^ENV ${k}=${v}$`, "m"));
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
  expect(cmd.slice(0, 1 + NODE_FLAGS.length)).toEqual(["node", ...NODE_FLAGS]);
  expect(deployments.length).toBeGreaterThan(0);
  for (const d of deployments) {
    const container = d.spec.template.spec.containers[0];
    expect([d.metadata.name, container.command.slice(0, 1 + NODE_FLAGS.length)]).toEqual([d.metadata.name, ["node", ...NODE_FLAGS]]);
    for (const [name, value] of Object.entries(START_ENV)) expect(container.env).toContainEqual({ name, value });
  }
});

test("docker-compose.yml runs one node for each service, as the Kubernetes manifests do", () => {
  const compose = parse(fs.readFileSync(path.resolve(__dirname, "../../docker-compose.yml"), "utf8"), { merge: true });
  const services = Object.values(compose.services as Record<string, { environment?: { SERVICES?: string } }>)
    .map((s) => s.environment?.SERVICES)
    .filter((s): s is string => s !== undefined);
  expect(services.sort()).toEqual(Object.keys(SERVICES).sort());
});
