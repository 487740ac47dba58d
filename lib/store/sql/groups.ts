/**
 * Calls for one key (a vault) that arrive while an earlier call for that key runs wait, and then
 * run together as one group: the first call of a quiet moment runs at once, alone, and under load
 * each group takes what arrived during the one before it (up to `max`). `run` answers each call
 * of a group for itself, in the group's order; if it throws, every call of the group fails so.
 */
/** A call waiting for its answer. */
interface Waiting<A, R> {
  args: A;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

export class KeyedGroups<A, R> {
  /** Per key with a group running: the calls waiting for the next group. */
  private readonly waiting = new Map<string, Array<Waiting<A, R>>>();

  constructor(
    private readonly run: (key: string, group: readonly A[]) => Promise<Array<PromiseSettledResult<R>>>,
    private readonly max: number,
  ) {}

  submit(key: string, args: A): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const entry = { args, resolve, reject };
      const queue = this.waiting.get(key);
      if (queue) {
        queue.push(entry);
        return;
      }
      this.waiting.set(key, []);
      void this.drain(key, [entry]);
    });
  }

  private async drain(key: string, first: Array<Waiting<A, R>>): Promise<void> {
    let group = first;
    for (;;) {
      try {
        const answers = await this.run(
          key,
          group.map((e) => e.args),
        );
        group.forEach((e, i) => {
          const a = answers[i];
          if (a?.status === "fulfilled") e.resolve(a.value);
          else e.reject(a ? a.reason : new Error("KeyedGroups: a call of the group was not answered"));
        });
      } catch (err) {
        for (const e of group) e.reject(err);
      }
      const queue = this.waiting.get(key)!;
      if (queue.length === 0) {
        this.waiting.delete(key);
        return;
      }
      group = queue.splice(0, this.max);
    }
  }
}
