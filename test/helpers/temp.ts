/** A fresh temporary folder (under the run's folder, test/setup/run-dir.js, which the run removes at its end). */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function tempDir(prefix = "vault-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
