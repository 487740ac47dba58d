/** The one poll loop of the tests (test/helpers/wait.ts): it answers, or fails by its deadline naming what it waited for. */
import { eventually } from "../../helpers/wait";
test("a probe that never answers fails by its deadline", async () => {
  const t0 = Date.now();
  await expect(eventually("nothing", () => new Promise<boolean>(() => undefined), { timeoutMs: 300 })).rejects.toThrow(
    "timed out after 300 ms waiting for nothing (its last probe never answered)",
  );
  expect(Date.now() - t0).toBeLessThan(2000);
  let n = 0;
  expect(await eventually("third", () => ++n >= 3 && n, { everyMs: 10 })).toBe(3);
  await expect(
    eventually(
      "never",
      () => {
        throw new Error("down");
      },
      { timeoutMs: 100, everyMs: 10 },
    ),
  ).rejects.toThrow("(last: down)");
});
