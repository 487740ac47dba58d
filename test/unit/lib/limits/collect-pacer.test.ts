/**
 * The collection pacer of the chunk routes (lib/limits/collect-pacer.ts): a collection once every
 * so many bytes moved, never two at once, and none where V8's `gc` is not exposed. Whether it keeps
 * a process's memory down is measured where the bytes move: test/cluster/attachments.test.ts and
 * `BENCH_PARTS=files npm run bench`.
 */
import { CollectPacer, type Collect } from "../../../../lib/limits/collect-pacer";

const MiB = 1024 * 1024;
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A `gc` that records each call and finishes when told to. */
function recordingGc() {
  const calls: Array<Parameters<Collect>[0]> = [];
  const finish: Array<() => void> = [];
  const collect: Collect = (options) => {
    calls.push(options);
    return new Promise<void>((resolve) => finish.push(resolve));
  };
  return { calls, finish, collect };
}

test("one full collection, run as a task of its own, once the bytes moved reach the pace", async () => {
  const gc = recordingGc();
  const pacer = new CollectPacer(4 * MiB, gc.collect);
  pacer.note(3 * MiB);
  await settle();
  expect(gc.calls).toEqual([]);
  pacer.note(1 * MiB);
  // Not inside the request that crossed the pace.
  expect(gc.calls).toEqual([]);
  await settle();
  expect(gc.calls).toEqual([{ type: "major", execution: "async" }]);
  gc.finish[0]!();
  await settle();
  // The count starts again from nothing.
  pacer.note(3 * MiB);
  await settle();
  expect(gc.calls).toHaveLength(1);
  pacer.note(1 * MiB);
  await settle();
  expect(gc.calls).toHaveLength(2);
});

test("never two collections at once: bytes moved meanwhile wait for the next pace", async () => {
  const gc = recordingGc();
  const pacer = new CollectPacer(4 * MiB, gc.collect);
  pacer.note(4 * MiB);
  await settle();
  for (let i = 0; i < 20; i++) pacer.note(1 * MiB);
  await settle();
  expect(gc.calls).toHaveLength(1);
  expect(pacer.collections).toBe(1);
  gc.finish[0]!();
  await settle();
  pacer.note(1 * MiB);
  await settle();
  expect(gc.calls).toHaveLength(2);
});

test("a collection that fails does not stop the next one", async () => {
  let calls = 0;
  const pacer = new CollectPacer(1 * MiB, () => {
    calls++;
    throw new Error("no collection here");
  });
  pacer.note(1 * MiB);
  await settle();
  pacer.note(1 * MiB);
  await settle();
  expect(calls).toBe(2);
});

test("where `gc` is not exposed, or the pace is 0, nothing is asked for", async () => {
  const off = new CollectPacer(4 * MiB, undefined);
  off.note(100 * MiB);
  const gc = recordingGc();
  const zero = new CollectPacer(0, gc.collect);
  zero.note(100 * MiB);
  await settle();
  expect([off.collections, zero.collections, gc.calls.length]).toEqual([0, 0, 0]);
});
