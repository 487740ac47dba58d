/**
 * The server as it ships, both ways it starts: `npm start` (dist/bin/server.js, the server pack
 * minified by build/bundle-server.mjs) and the Dockerfile's CMD (moleculer-runner over the
 * compiled files, with the image's environment). The pack keeps every call that can throw
 * (build/kept-calls.mjs fails the build otherwise: a check that relied on what a dropped call
 * throws passed everything in the pack while the tests, run from the sources, saw it hold).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { Api, newOrg } from "../helpers/client";
import { killAllServers, startAsDockerfile, startShippedServer } from "../helpers/process";

const ROOT = path.resolve(__dirname, "../..");

afterAll(killAllServers);

/** Runs ES module `code` in a child Node in the project's folder (the build steps are ES modules); what it printed, as JSON. */
function inChild(code: string): unknown {
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

const KEPT_CALLS = JSON.stringify(path.join(ROOT, "build/kept-calls.mjs"));

test("the server pack makes every call its modules make to a built-in that can throw (the build's check, on this build)", () => {
  const dropped = inChild(`
    import fs from "node:fs";
    import path from "node:path";
    import { droppedCalls } from ${KEPT_CALLS};
    const dist = ${JSON.stringify(path.join(ROOT, "dist"))};
    const pack = fs.readFileSync(path.join(dist, "server-pack.js"), "utf8");
    const modules = [...pack.matchAll(/"([^"]+[.]js)":\\(\\)=>/g)].map((m) => m[1]);
    if (modules.length < 100) throw new Error("the pack's module map was not read: " + modules.length);
    console.log(JSON.stringify(droppedCalls(modules.map((m) => [m, fs.readFileSync(path.join(dist, m), "utf8")]), pack)));
  `);
  expect(dropped).toEqual([]);
});

test("the build's check fails on a call the minifier drops: a decodeURIComponent whose result is unused, minified as the pack is", () => {
  const seen = inChild(`
    import { build } from "rolldown";
    import { checkKeptCalls } from ${KEPT_CALLS};
    const source = {
      dropped: "exports.ok = (p) => { try { decodeURIComponent(p); return true; } catch { return false; } };",
      kept: "exports.ok = (p) => { try { return decodeURIComponent(p) !== undefined; } catch { return false; } };",
    };
    const minified = async (code) => {
      const out = await build({
        input: "entry",
        write: false,
        logLevel: "silent",
        plugins: [{ name: "v", resolveId: (id) => id, load: () => code }],
        output: { format: "cjs", minify: true, keepNames: true },
      });
      return out.output[0].code;
    };
    const verdict = async (code) => {
      try {
        checkKeptCalls([["m.js", code]], await minified(code), "the test's pack");
        return "kept";
      } catch (err) {
        return err.message;
      }
    };
    console.log(JSON.stringify({ dropped: await verdict(source.dropped), kept: await verdict(source.kept) }));
  `) as { dropped: string; kept: string };
  expect(seen.kept).toBe("kept");
  expect(seen.dropped).toMatch(/^the test's pack dropped calls that can throw/);
  expect(seen.dropped).toContain("decodeURIComponent: 1 call(s) in m.js; 0 in the test's pack");
});

test("`npm start`'s server (the pack) answers a path whose percent-encoding is broken 404, and a list where a number goes 400", async () => {
  const server = await startShippedServer();
  try {
    const api = new Api(server.url);
    const { owner } = await newOrg(api);
    const broken = await api.get("/vaults/%zz", { token: owner.token });
    expect([broken.status, broken.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const listed = await api.get("/audit?orgId=" + owner.orgId + "&before[]=1", { token: owner.token });
    expect([listed.status, listed.body.error]).toEqual([
      400,
      { code: "INVALID", field: "before", message: "The 'before' field must be a number." },
    ]);
    expect(server.process.output()).not.toMatch(/failed:/);
  } finally {
    await server.stop();
  }
});

test("the Dockerfile's CMD and environment (moleculer-runner, no pack): ready on the operations port, serving, the same edges, and a clean stop", async () => {
  const server = await startAsDockerfile();
  try {
    // The image's HEALTHCHECK asks the operations port.
    expect((await fetch(`http://127.0.0.1:${server.opsPort}/readyz`)).status).toBe(200);
    const api = new Api(server.url);
    const { owner } = await newOrg(api);
    expect((await api.get("/vaults", { token: owner.token })).status).toBe(200);
    const broken = await api.get("/vaults/%zz", { token: owner.token });
    expect([broken.status, broken.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const listed = await api.get("/audit?orgId=" + owner.orgId + "&limit[]=1", { token: owner.token });
    expect([listed.status, listed.body.error?.field]).toEqual([400, "limit"]);
    expect(await server.process.kill("SIGTERM")).toBe(0);
  } finally {
    await server.stop();
  }
});
