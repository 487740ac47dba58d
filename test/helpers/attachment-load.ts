/**
 * What a large upload's test and benchmark need around the SDK: a file of random bytes that is
 * never held whole, a fetch that counts the chunk requests, and every server process's resident
 * memory sampled while the file streams through.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import fs from "node:fs";

const MiB = 1024 * 1024;

/**
 * `size` random bytes read a slice at a time (AES-256-CTR's keystream under a random key, so any
 * slice is made on demand and made again the same), and their SHA-256.
 */
export function keystreamFile(size: number): {
  size: number;
  read(offset: number, length: number): Promise<Uint8Array<ArrayBuffer>>;
  sha256: string;
} {
  const key = randomBytes(32);
  const slice = (offset: number, length: number): Uint8Array<ArrayBuffer> => {
    const block = Math.floor(offset / 16);
    const iv = Buffer.alloc(16);
    iv.writeBigUInt64BE(BigInt(block), 8);
    const skip = offset - block * 16;
    const out = createCipheriv("aes-256-ctr", key, iv).update(Buffer.alloc(skip + Math.max(0, Math.min(length, size - offset))));
    return new Uint8Array(out.buffer as ArrayBuffer, out.byteOffset + skip, out.length - skip);
  };
  const hash = createHash("sha256");
  for (let at = 0; at < size; at += MiB) hash.update(slice(at, MiB));
  return { size, read: async (offset, length) => slice(offset, length), sha256: hash.digest("hex") };
}

export interface ChunkPut {
  index: number;
  started: number;
  /** The answer's status; 0 while in flight or when no answer came. */
  status: number;
}

/** A fetch for the SDK that records every chunk PUT (index, start, answer) and passes everything on. */
export function countingFetch(): { fetch: typeof fetch; puts: ChunkPut[] } {
  const puts: ChunkPut[] = [];
  const counted: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const index = init?.method === "PUT" ? /\/attachments\/[^/]+\/chunks\/(\d+)$/.exec(url)?.[1] : undefined;
    if (index === undefined) return globalThis.fetch(input, init);
    const put: ChunkPut = { index: Number(index), started: Date.now(), status: 0 };
    puts.push(put);
    const res = await globalThis.fetch(input, init);
    put.status = res.status;
    return res;
  };
  return { fetch: counted, puts };
}

/** A field of /proc/<pid>/status in MiB; undefined once the process is gone. */
function statusMiB(pid: number, field: "VmRSS" | "VmHWM"): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
  } catch {
    return undefined;
  }
}

/**
 * Starts the kernel's high-water mark of a process's RSS (VmHWM) again from its RSS now (Linux's
 * clear_refs, root or the process's owner); false where that is not allowed.
 */
function resetHighWaterMark(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** One process of a named role (a node keeps its name when it is restarted in a new process). */
export interface Life {
  name: string;
  pid: number;
  /** Its RSS when it was first measured serving, MiB (unset for a process started again until `rebase`). */
  base?: number;
  /** Its highest RSS since `base`, MiB. */
  peak: number;
  /** Whether its VmHWM counts from `base` (reset then), or from its start. */
  hwmFromBase: boolean;
  /** Replaced by a new process under the same name. */
  ended: boolean;
}

/**
 * Every process's resident memory, every `everyMs`: growth is its highest RSS over its RSS at
 * `start` (or, for a process that replaced one, at `rebase`). At `stop`, a process still running
 * is also held to its kernel high-water mark (VmHWM), reset at its base, which no sampling can miss
 * (where it cannot be reset: only a process running since `start`, whose mark may then predate it).
 */
export class RssWatch {
  readonly lives: Life[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pids: () => Record<string, number>,
    private readonly everyMs = 100,
  ) {}

  start(): void {
    for (const [name, pid] of Object.entries(this.pids())) {
      const hwmFromBase = resetHighWaterMark(pid);
      const base = statusMiB(pid, "VmRSS");
      if (base !== undefined) this.lives.push({ name, pid, base, peak: base, hwmFromBase, ended: false });
    }
    // Never what keeps a process alive: a test that failed half-way still ends.
    this.timer = setInterval(() => this.sample(), this.everyMs).unref();
  }

  /** The named role's current process serves from now on: its growth is counted from its RSS now. */
  rebase(name: string): void {
    this.sample();
    const life = this.current(name);
    if (!life) return;
    const hwmFromBase = resetHighWaterMark(life.pid);
    const rss = statusMiB(life.pid, "VmRSS");
    if (rss !== undefined) Object.assign(life, { base: rss, peak: rss, hwmFromBase });
  }

  stop(): Life[] {
    this.sample();
    clearInterval(this.timer);
    for (const life of this.lives.filter((l) => !l.ended && l.base !== undefined)) {
      const hwm = statusMiB(life.pid, "VmHWM");
      if (hwm !== undefined && (life.hwmFromBase || this.first(life))) life.peak = Math.max(life.peak, hwm);
    }
    return this.lives;
  }

  /** Each process's growth, MiB; a process started again and never rebased counts as Infinity. */
  growth(life: Life): number {
    return life.base === undefined ? Infinity : life.peak - life.base;
  }

  private current(name: string): Life | undefined {
    return this.lives.findLast((l) => l.name === name);
  }

  /** The first process of its name: running since `start`. */
  private first(life: Life): boolean {
    return this.lives.find((l) => l.name === life.name) === life;
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.pids())) {
      let life = this.current(name);
      if (!life || life.pid !== pid) {
        if (life) life.ended = true;
        life = { name, pid, peak: 0, hwmFromBase: false, ended: false };
        this.lives.push(life);
      }
      const rss = statusMiB(pid, "VmRSS");
      if (life.base !== undefined && rss !== undefined) life.peak = Math.max(life.peak, rss);
    }
  }
}

/** A table of the lives' RSS: base, peak, growth, MiB. */
export function rssTable(watch: RssWatch): string {
  return watch.lives
    .map((l) => `${l.name} (pid ${l.pid}): ${l.base?.toFixed(0) ?? "?"} -> ${l.peak.toFixed(0)} MiB (+${watch.growth(l).toFixed(1)})`)
    .join("\n");
}
