// Ends a jest run with one plain line, `N passed, N failed` (and skipped), that CI tools read. It is
// written synchronously when the process exits, so it comes after jest's own summary.
const { writeSync } = require('node:fs');

class SummaryReporter {
    onRunComplete(_contexts, results) {
        const skipped = results.numPendingTests + results.numTodoTests;
        const line = `\n${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}\n`;
        process.once('exit', () => writeSync(2, line));
    }
}
module.exports = SummaryReporter;
