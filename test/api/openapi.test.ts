/**
 * The OpenAPI document: served as built from the route table, accepted by an independent linter
 * (Redocly's recommended rules), and strict enough that the answer check catches a wrong answer.
 * That every answer the suite sees conforms is checked by test/setup/check-responses.ts.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { openApiDocument } from "../../lib/http/openapi";
import { ROUTES, paramsOf, type ActionName } from "../../lib/http/routes";
import { Api, registerUser } from "../helpers/client";
import { requestProblems, responseProblems } from "../helpers/openapi-check";
import { b64, signWrap, wrapShared, newVaultKey } from "../helpers/crypto";
import { startTestServer, type TestServer } from "../helpers/server";

let server: TestServer;
let api: Api;
beforeAll(async () => {
  server = await startTestServer({ REGISTRATION_MODE: "open" });
  api = new Api(server.url);
});
afterAll(() => server.stop());

test("GET /api/v1/openapi.json serves the document built from the route table, without a token", async () => {
  const res = await api.get("/openapi.json");
  expect(res.status).toBe(200);
  expect(res.body).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  const operations = Object.values(res.body.paths as Record<string, object>).flatMap((ops) => Object.keys(ops));
  expect(operations).toHaveLength(ROUTES.length);
  // The interface's own paths and fields, as written.
  expect(Object.keys(res.body.paths)).toEqual(
    expect.arrayContaining(["/vaults/{vaultId}/rekey", "/invites/redeem", "/invites/{inviteId}"]),
  );
  expect(res.body.paths["/vaults/{vaultId}/members"].post.requestBody.content["application/json"].schema.required).toEqual([
    "recipientUserId",
    "encryptedVaultKey",
    "wrapSignature",
    "role",
  ]);
  expect(res.body.paths["/invites"].get.parameters).toEqual([expect.objectContaining({ name: "orgId", in: "query", required: true })]);
});

test("Redocly's linter, with its recommended rules, finds no problem in the document", () => {
  const linter = path.join(__dirname, "../helpers", "lint-openapi.mjs");
  const run = spawnSync(process.execPath, [linter], { input: JSON.stringify(openApiDocument()), encoding: "utf8" });
  expect(run.stderr).toBe("");
  const problems = JSON.parse(run.stdout) as Array<{ ruleId: string; message: string; severity: string }>;
  expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([]);

  // The linter does refuse a broken document: an operation without responses, a dangling reference.
  const broken = openApiDocument() as any;
  broken.paths["/vaults"].get.responses = {};
  broken.paths["/vaults"].post.responses["201"].content["application/json"].schema = { $ref: "#/components/schemas/Nope" };
  const again = spawnSync(process.execPath, [linter], { input: JSON.stringify(broken), encoding: "utf8" });
  const found = (JSON.parse(again.stdout) as Array<{ ruleId: string }>).map((p) => p.ruleId);
  expect(found).toEqual(expect.arrayContaining(["operation-2xx-response", "no-unresolved-refs"]));
});

test("each action validates exactly the parameters its route declares", async () => {
  const actions = server.node.broker.registry.getActionList({}) as Array<{
    name: string;
    action?: { params?: unknown };
  }>;
  const byName = new Map(actions.map((a) => [a.name, a.action?.params]));
  for (const route of ROUTES.filter((r) => r.params && !r.streamBody)) {
    expect([route.action, byName.get(route.action)]).toEqual([route.action, paramsOf(route.action as ActionName)]);
  }
});

test("the document's request schemas accept what the server accepts, and refuse what it refuses", async () => {
  const user = await registerUser(api);
  const wrapped = wrapShared(newVaultKey(), user.bundle.publicKey);
  const good = {
    name: "Team",
    type: "shared",
    encryptedVaultKey: b64(wrapped),
    wrapSignature: b64(signWrap(wrapped, user.keys.edPrivate)),
  };
  const cases: Array<[string, object]> = [
    ["as a client sends it", good],
    ["an unknown field (dropped by the server)", { ...good, color: "blue" }],
    ["no type", { ...good, type: undefined }],
    ["a type not in the enum", { ...good, type: "team" }],
    ["a name of 257 characters", { ...good, name: "x".repeat(257) }],
    ["a key that is not canonical base64", { ...good, encryptedVaultKey: "AB=C" }],
    ["a roster link that is not an object", { ...good, rosterLink: "link" }],
  ];
  for (const [what, body] of cases) {
    const res = await api.post("/vaults", { token: user.token, body });
    const documentSays = requestProblems("POST /vaults", JSON.parse(JSON.stringify(body))).length === 0;
    expect([what, res.status === 201]).toEqual([what, documentSays]);
  }
  expect(requestProblems("POST /vaults", { ...good, type: "team" }).join()).toMatch(/\/type must be equal to one of the allowed values/);
});

describe("the answer check", () => {
  const vault = {
    vaultId: "8f7a2a4e-0b7c-4c56-9a1e-3f9b2c1d0e5f",
    vaultName: "Team",
    vaultType: "shared",
    orgId: "0c0e8c1e-7d1a-4b7e-8f6a-2d3c4b5a6978",
    encryptedVaultKey: "AAAA",
    senderId: "1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d",
    wrapSignature: "AAAA",
    role: "owner",
    keyVersion: 1,
    rekeyRequired: false,
    createdAt: "2026-11-23T08:00:00.000Z",
    updatedAt: "2026-11-23T08:00:00.000Z",
  };
  const url = "http://127.0.0.1:1/api/v1/vaults";

  test("passes a conforming answer and names what is wrong with others", () => {
    expect(responseProblems("POST", url, 201, JSON.stringify(vault))).toEqual([]);
    expect(responseProblems("POST", url, 200, JSON.stringify(vault))).toEqual(["200 is not the documented success status 201"]);
    const { vaultId: _, ...withoutId } = vault;
    expect(responseProblems("POST", url, 201, JSON.stringify(withoutId)).join()).toMatch(/must have required property 'vaultId'/);
    expect(responseProblems("POST", url, 201, JSON.stringify({ ...vault, secret: "x" })).join()).toMatch(/additional properties/);
    expect(responseProblems("POST", url, 201, JSON.stringify({ ...vault, role: "boss" })).join()).toMatch(/\/role must be equal to one of/);
    expect(responseProblems("GET", `${url}/${vault.vaultId}`, 200, JSON.stringify({ ...vault, createdAt: "yesterday" })).join()).toMatch(
      /createdAt must match format "date-time"/,
    );
    expect(responseProblems("DELETE", `${url}/${vault.vaultId}`, 204, "")).toEqual([]);
    expect(responseProblems("DELETE", `${url}/${vault.vaultId}`, 204, "{}")).toHaveLength(1);
    expect(responseProblems("GET", `${url}/x/y/z`, 200, "{}")).toHaveLength(1);
  });

  test("every error must be the contract's error body", () => {
    expect(responseProblems("GET", url, 404, JSON.stringify({ error: { code: "NOT_FOUND", message: "Vault not found" } }))).toEqual([]);
    expect(responseProblems("GET", url, 400, JSON.stringify({ error: { code: "INVALID", message: "m", field: "name" } }))).toEqual([]);
    expect(responseProblems("GET", url, 404, JSON.stringify({ message: "Not found" }))).not.toEqual([]);
    expect(responseProblems("GET", url, 500, JSON.stringify({ error: { code: "OOPS", message: "m" } }))).not.toEqual([]);
  });

  test("answers outside /api/v1 (the web vault, metrics) are not the API's", () => {
    expect(responseProblems("GET", "http://127.0.0.1:1/index.html", 200, "<html>")).toEqual([]);
  });

  test("a real answer passes: the registered user's vault list", async () => {
    const user = await registerUser(api);
    const res = await fetch(`${server.url}/vaults`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(responseProblems("GET", res.url, res.status, await res.text())).toEqual([]);
  });
});
