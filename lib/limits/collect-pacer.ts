/**
 * Garbage collection paced by the bytes a process moves in attachment chunks and send parts.
 *
 * Every chunk leaves dead buffers behind: the socket's or the NATS client's reads, the body, the
 * decoded bytes, the answer. V8 frees buffers held outside its heap only at a full collection, and
 * starts one on their account only once 64 MiB more of them have piled up since the last. So a
 * process moving a file would grow by 80 MiB or more of garbage, however small each chunk.
 * Asking for a collection after every `everyBytes` moved bounds that garbage to about `everyBytes`,
 * at the cost of one full collection of a small heap per that many bytes (BENCHMARKS.md, "files").
 *
 * The collection is V8's own (`gc`, exposed by the `--expose-gc` start flag: lib/ops/start-flags.ts),
 * run as a task of its own rather than inside the request, and never more than one at a time.
 * Where `gc` is not exposed (a process not started as the server is), nothing is collected early.
 */

/** `gc` as `--expose-gc` exposes it. */
export type Collect = (options: { type: "major"; execution: "async" }) => Promise<void> | void;

export class CollectPacer {
  private moved = 0;
  private running = false;
  /** Collections asked for so far. */
  collections = 0;

  constructor(
    private readonly everyBytes: number,
    private readonly collect: Collect | undefined = (globalThis as { gc?: Collect }).gc,
  ) {}

  /** Counts `bytes` moved; past `everyBytes` since the last, asks for a collection unless one is running. */
  note(bytes: number): void {
    if (!this.collect || this.everyBytes <= 0) return;
    this.moved += bytes;
    if (this.moved < this.everyBytes || this.running) return;
    this.moved = 0;
    this.running = true;
    this.collections++;
    void Promise.resolve()
      .then(() => this.collect!({ type: "major", execution: "async" }))
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
      });
  }
}
