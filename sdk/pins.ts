/**
 * Keys pinned on first use. The server hands out everyone's public keys, so it could hand out its
 * own instead; a client that remembers each user's fingerprint notices a change and refuses it
 * until its user has checked the new fingerprint out of band and trusted it.
 */
export interface PinStore {
  get(userId: string): Promise<string | undefined>;
  set(userId: string, fingerprint: string): Promise<void>;
}

/** Pins for the life of the process; the CLI keeps its own on disk. */
export class MemoryPinStore implements PinStore {
  private readonly pins = new Map<string, string>();
  async get(userId: string) {
    return this.pins.get(userId);
  }
  async set(userId: string, fingerprint: string) {
    this.pins.set(userId, fingerprint);
  }
}
