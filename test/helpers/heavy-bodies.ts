/**
 * Sending heavy request bodies to a server process and watching what they cost it, for the tests
 * (test/api/hardening.test.ts) and the benchmark (bench/bodies.ts) alike.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { sleep } from "./wait";

/** Peak resident set size of a process so far, from /proc (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  // Under taskset the child is taskset's exec of node: the same pid.
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

const POST_FILE = `
  const http = require("node:http"), fs = require("node:fs");
  const req = http.request(process.argv[1], { method: "POST", headers: { authorization: "Bearer " + process.argv[2], "content-type": "application/json", "content-length": fs.statSync(process.argv[3]).size } });
  req.on("response", (res) => { let t = ""; res.on("data", (d) => (t += d)); res.on("end", () => { let code; try { code = JSON.parse(t).error.code; } catch {} console.log(JSON.stringify({ status: res.statusCode, code })); process.exit(0); }); });
  req.on("error", (e) => { console.log(JSON.stringify({ status: 0, code: e.code })); process.exit(0); });
  fs.createReadStream(process.argv[3]).pipe(req);`;

/**
 * POSTs `file` as a JSON body to `url` from a child process (so that this one, which may be
 * watching the server, stays idle); the answer's status and error code (0 and the socket's error
 * code when there was no answer).
 */
export function postFileFromChild(url: string, token: string, file: string): Promise<{ status: number; code?: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["-e", POST_FILE, url, token, file], (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout))));
  });
}

/** Runs `work` while `${url}/health` is asked every 20 ms (and 200 ms after); its result, and the slowest health answer in ms. */
export async function whileHealthWatched<T>(url: string, work: () => Promise<T>): Promise<{ result: T; slowestHealthMs: number }> {
  let slowest = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const t = performance.now();
      await fetch(`${url}/health`);
      slowest = Math.max(slowest, performance.now() - t);
      await sleep(20);
    }
  })();
  try {
    const result = await work();
    await sleep(200);
    return { result, slowestHealthMs: slowest };
  } finally {
    watching = false;
    await watcher;
  }
}
