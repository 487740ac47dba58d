/**
 * Jest's Node environment, telling a test file's own hooks whether the test that just ran failed
 * (`globalThis.__testFailed`), so that an afterEach can add what it knows of the failure: the
 * browser suites add what each page showed (test/helpers/page-failures.ts).
 */
const { TestEnvironment } = require("jest-environment-node");

class FailureAwareEnvironment extends TestEnvironment {
  async handleTestEvent(event) {
    if (event.name === "test_start") this.global.__testFailed = false;
    if (event.name === "test_fn_failure") this.global.__testFailed = true;
  }
}

module.exports = FailureAwareEnvironment;
