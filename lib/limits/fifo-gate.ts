/**
 * At most `width` tasks at once, the rest waiting their turn in the order they came (FIFO). The
 * server's password hashing runs behind one (lib/auth/auth-hash.ts): each scrypt call holds 16 MiB
 * (N = 16384, r = 8) on a libuv thread, so a burst of logins costs at most `width` of those at a
 * time (one per core, and fewer than libuv's threads), and no login is overtaken by later ones.
 */
export class FifoGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly width: number) {
    if (!Number.isInteger(width) || width < 1) throw new RangeError(`a gate's width is a positive integer, not ${width}`);
  }

  /** Runs `task` once a place is free; its place is given to the next in line however it ends. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.width) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      // The place passes straight to the next in line (running stays the same), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Tasks running now, and waiting (for tests and metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
