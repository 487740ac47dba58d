// `npm start`'s first step: builds only when a source file changed since the last build (a
// restart then takes well under a second instead of a full tsc and Vite build). The build
// writes dist/.build-stamp last; anything newer than it under the build's inputs rebuilds.
// Plain JavaScript, run before anything is compiled.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const stamp = path.join(root, "dist", ".build-stamp");
const INPUTS = ["app", "bin", "build", "lib", "protocol", "sdk", "cli", "services", "mixins", "bench", "deploy", "web", "test/helpers"];
const FILES = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "moleculer.config.ts"];

function newest(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of fs.readdirSync(p)) if (entry !== "node_modules") max = Math.max(max, newest(path.join(p, entry)));
  return max;
}

const built = (() => {
  try {
    return fs.statSync(stamp).mtimeMs;
  } catch {
    return 0;
  }
})();
const changed = Math.max(...[...INPUTS, ...FILES].map((p) => newest(path.join(root, p))));
const current = built > 0 && changed <= built;
// `--check`: says whether it would build (exit 1) or not (exit 0), and builds nothing.
if (process.argv.includes("--check")) process.exit(current ? 0 : 1);
if (current) process.exit(0);
const run = spawnSync("npm", ["run", "build"], { cwd: root, stdio: "inherit", shell: process.platform === "win32" });
process.exit(run.status ?? 1);
