/**
 * What a client remembers so that the server cannot rewrite it later: key fingerprints pinned
 * on first use, and the highest roster head seen per vault.
 *
 * Keys pinned on first use. The server hands out everyone's public keys, so it could hand out its
 * own instead; a client that remembers each user's fingerprint notices a change and refuses it
 * until its user has checked the new fingerprint out of band and trusted it.
 */
/** Values a client keeps by id, wherever it keeps them (memory, a file, the browser's storage). */
export interface KeptValues<T> {
  get(id: string): Promise<T | undefined>;
  set(id: string, value: T): Promise<void>;
}

/** Key fingerprints by user id. */
export type PinStore = KeptValues<string>;

/** The head of a vault's signed roster: its last link's seq and hash. */
export interface RosterHead {
  seq: number;
  hash: string;
}

/**
 * The highest roster head this client has seen, by vault id. A server that later shows an older
 * chain (a rollback: a removal undone) or another link at a seen seq (a fork) is refused.
 */
export type RosterHeadStore = KeptValues<RosterHead>;

/** Kept for the life of the process (the CLI keeps its own on disk, the web vault in the browser). */
class MemoryValues<T> implements KeptValues<T> {
  private readonly values = new Map<string, T>();
  async get(id: string) {
    return this.values.get(id);
  }
  async set(id: string, value: T) {
    this.values.set(id, value);
  }
}

export class MemoryPinStore extends MemoryValues<string> {}
export class MemoryRosterHeadStore extends MemoryValues<RosterHead> {}
