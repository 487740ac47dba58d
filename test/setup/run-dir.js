/**
 * One temporary folder per `npm test` run, removed when the run ends: every test's DATA_DIR, CLI
 * state and backup (`os.tmpdir()`, which reads TMPDIR), and every server or CLI process a test
 * starts (they inherit TMPDIR), write under it, so a run leaves nothing behind in /tmp.
 * KEEP_TEST_TMP=1 keeps it (its path is printed) to look at after a failure.
 */
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

module.exports = async function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-tests-"));
  // Traversable by the throwaway PostgreSQL's own user (test/helpers/throwaway.ts), not listable.
  fs.chmodSync(dir, 0o711);
  process.env.VAULT_TEST_RUN_DIR = dir;
  process.env.TMPDIR = dir;
};
