// Prints the closing line CI reads in any language: "tests: N passed, N failed, N skipped".
class PlainSummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    if (!process.env.MONGO_URL)
      process.stdout.write("\nnot run: test/contract/mongo.test.ts (the store contract on MongoDB) needs MONGO_URL, a replica set\n");
    process.stdout.write(`\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}
module.exports = PlainSummaryReporter;
