// Prints the closing line CI reads in any language: "tests: N passed, N failed, N skipped".
class PlainSummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}
module.exports = PlainSummaryReporter;
