/** The gate in front of the server's password hashing (lib/limits/fifo-gate.ts): a width, and first come first served. */
import { FifoGate } from "../../../../lib/limits/fifo-gate";

/** A task that runs until it is released by hand, recording when it started. */
function manual(started: string[], name: string) {
  let release!: (fail?: boolean) => void;
  const done = new Promise<string>((resolve, reject) => (release = (fail) => (fail ? reject(new Error(name)) : resolve(name))));
  return {
    task: () => {
      started.push(name);
      return done;
    },
    release,
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("FIFO gate", () => {
  test("no more than its width run at once; the others start in the order they came, as places free up, even when a task fails", async () => {
    const gate = new FifoGate(2);
    const started: string[] = [];
    const tasks = ["a", "b", "c", "d", "e"].map((n) => manual(started, n));
    const results = tasks.map((t) => gate.run(t.task).catch((err: Error) => `failed ${err.message}`));
    await turn();
    expect(started).toEqual(["a", "b"]);
    expect(gate.load).toEqual({ running: 2, waiting: 3 });

    tasks[1]!.release(true); // b fails: its place goes to c
    await turn();
    expect(started).toEqual(["a", "b", "c"]);
    tasks[0]!.release();
    await turn();
    expect(started).toEqual(["a", "b", "c", "d"]);
    expect(gate.load).toEqual({ running: 2, waiting: 1 });

    for (const t of tasks.slice(2)) t.release();
    expect(await Promise.all(results)).toEqual(["a", "failed b", "c", "d", "e"]);
    expect(started).toEqual(["a", "b", "c", "d", "e"]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  test("a task that throws at once still gives its place back", async () => {
    const gate = new FifoGate(1);
    await expect(
      gate.run(() => {
        throw new Error("at once");
      }),
    ).rejects.toThrow("at once");
    expect(await gate.run(async () => "next")).toBe("next");
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  test("a width that is not a positive integer is refused", () => {
    expect(() => new FifoGate(0)).toThrow(RangeError);
    expect(() => new FifoGate(1.5)).toThrow(RangeError);
  });
});
