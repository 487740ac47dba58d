/**
 * The order of a run's test files: Jest's own (failed first, then the longest), with the killed-node
 * recovery test first and the 100 MiB upload through the split deployment last. The recovery test
 * times restarts against 2 s on a machine of two cores; run in band after a heavy cluster test, what
 * that test leaves behind (its processes' exits, the stores' own work after it) slowed them past the
 * bound: after the 100 MiB upload by 0.2 to 0.7 s (three runs in three), after the whole split test
 * by 3 to 53 ms (once, with the emergency node making a cluster of 18 processes). Run first, it
 * passed each time.
 */
const Sequencer = require("@jest/test-sequencer").default;

const FIRST = [/test\/cluster\/recovery\.test\.ts$/];
const LAST = [/test\/cluster\/attachments\.test\.ts$/];

class TimedFirstHeavyLast extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const first = (t) => FIRST.some((re) => re.test(t.path));
    const last = (t) => LAST.some((re) => re.test(t.path));
    return [...sorted.filter(first), ...sorted.filter((t) => !first(t) && !last(t)), ...sorted.filter(last)];
  }
}

module.exports = TimedFirstHeavyLast;
