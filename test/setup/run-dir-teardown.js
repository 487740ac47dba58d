/** Removes the run's temporary folder (test/setup/run-dir.js) once every test file has finished. */
const fs = require("node:fs");

module.exports = async function teardown() {
  const dir = process.env.VAULT_TEST_RUN_DIR;
  if (!dir) return;
  if (process.env.KEEP_TEST_TMP === "1") console.log(`\nkept the test run's files: ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
};
