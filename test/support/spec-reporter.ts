/**
 * Mocha's spec reporter, then one line per failed test at the very end of the output:
 * its file, its full title and the first line of its error. The spec reporter's own list
 * gives each failure its stack (a browser test's can run to dozens of lines), so whoever
 * reads only the last lines of a long run (a CI log's tail) would otherwise see one failure
 * out of several, and not the first.
 */
import Mocha from "mocha";

const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;

class SpecWithFailureList extends Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const failed: string[] = [];
    runner.on(EVENT_TEST_FAIL, (test: Mocha.Test, error: Error) => {
      const where = test.file ? `${test.file.replace(`${process.cwd()}/`, "")}: ` : "";
      const first = String(error?.message ?? error).split("\n", 1)[0];
      failed.push(`${where}${test.fullTitle()} — ${first}`);
    });
    // Registered after the spec reporter's own listener, so it prints after the epilogue.
    runner.once(EVENT_RUN_END, () => {
      if (failed.length === 0) return;
      console.log(`\n${failed.length} failed, in the order they ran:`);
      for (const [i, line] of failed.entries()) console.log(`  ${i + 1}. ${line}`);
    });
  }
}

export { SpecWithFailureList as "module.exports" };
