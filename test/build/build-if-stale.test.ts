/**
 * `npm start` builds only when a source changed since the last build (build/build-if-stale.mjs): in a
 * copy of the script's layout, `--check` says "current" after a build stamp and "stale" once a
 * source file, a new file or a removed one is newer than it, or when there is no stamp.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "../helpers/server";

const SCRIPT = path.resolve(__dirname, "../../build/build-if-stale.mjs");

test("current after a build stamp; stale after a change, an added or a removed file, or without a stamp", () => {
  const root = tempDir("build-stale-");
  try {
    fs.mkdirSync(path.join(root, "build"));
    fs.mkdirSync(path.join(root, "lib"));
    fs.mkdirSync(path.join(root, "dist"));
    fs.copyFileSync(SCRIPT, path.join(root, "build", "build-if-stale.mjs"));
    fs.writeFileSync(path.join(root, "lib", "a.ts"), "export const a = 1;\n");
    const check = () => spawnSync(process.execPath, [path.join(root, "build", "build-if-stale.mjs"), "--check"]).status;
    const stampAt = (t: Date) => {
      fs.writeFileSync(path.join(root, "dist", ".build-stamp"), "x");
      fs.utimesSync(path.join(root, "dist", ".build-stamp"), t, t);
    };
    const later = (s: number) => new Date(Date.now() + s * 1000);
    expect(check()).toBe(1); // no stamp
    stampAt(later(10));
    expect(check()).toBe(0);
    fs.utimesSync(path.join(root, "lib", "a.ts"), later(20), later(20));
    expect(check()).toBe(1); // a source changed
    stampAt(later(30));
    expect(check()).toBe(0);
    fs.writeFileSync(path.join(root, "lib", "b.ts"), "");
    fs.utimesSync(path.join(root, "lib", "b.ts"), later(40), later(40));
    expect(check()).toBe(1); // a file added
    stampAt(later(50));
    fs.rmSync(path.join(root, "lib", "b.ts"));
    fs.utimesSync(path.join(root, "lib"), later(60), later(60));
    expect(check()).toBe(1); // a file removed (its folder changed)
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
