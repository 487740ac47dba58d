/**
 * What every part of the client shares: the wire, who is logged in, the unlocked keys (memory
 * only), what this device remembers (pins, seen roster heads), and the vault keys opened in this
 * session. The parts (session, trust, vaults, members, rekey, items, invites, audit) each take it.
 */
import { CHECKPOINT_EVERY } from "../../protocol/formats/item-log";
import type { Bytes } from "../../protocol/encoding";
import { ApiError } from "../errors";
import { Transport, type Tokens } from "../http";
import type { AccountKeys, DeriveMasterKey } from "../../protocol/crypto/keys";
import {
  MemoryPinStore,
  MemoryRosterHeadStore,
  MemoryValues,
  type InviteSecretStore,
  type KdfMemory,
  type KeptValues,
  type KnownVaultStore,
  type PinStore,
  type RosterHeadStore,
} from "../pins";
import type { Account } from "./types";
import type { SecondFactorPrompt } from "./login";
import { sameKdf } from "../../protocol/crypto/kdf";
import type { KdfParams } from "../../protocol/crypto/primitives";

export interface VaultClientOptions {
  baseUrl: string;
  /** A saved login, to resume without logging in again. */
  tokens?: Tokens;
  account?: Account;
  onTokens?: (tokens: Tokens | undefined) => void | Promise<void>;
  /** Where users' key fingerprints (with their emails) are pinned; in memory by default. */
  pins?: PinStore;
  /** Where the highest roster head seen per vault is kept; in memory by default. */
  rosterHeads?: RosterHeadStore;
  /** Where each account's KDF parameters are remembered, by email; in memory by default. */
  kdfMemory?: KdfMemory;
  /** Where the binding secrets of the invites this device makes are kept, by invited email; in memory by default. */
  inviteSecrets?: InviteSecretStore;
  /** Where the vaults this device has seen, and their verified names, are kept per account; in memory by default. */
  knownVaults?: KnownVaultStore;
  /** Where the master key is derived (the slow, memory-hard step); in this thread by default. A browser passes one that runs it in a Web Worker. */
  deriveMasterKey?: DeriveMasterKey;
  fetch?: typeof fetch;
  /** Links after a vault's last checkpoint that make this client sign a new one when it holds the whole item set (CHECKPOINT_EVERY by default). */
  checkpointEvery?: number;
  /** What this client calls itself in the user's list of sessions ("vaultctl on build-box", "Web vault, Firefox"). */
  deviceName?: string;
  /** Asked at a login of an account with a second factor (factors.ts); without it, such a login is `SecondFactorRequiredError`. */
  secondFactor?: SecondFactorPrompt;
  /**
   * Where this device keeps, by email, the token a second step answered with `rememberDevice`: sent
   * at the next logins, it skips the second step (with the right password only). Not kept by default.
   */
  deviceTokens?: KeptValues<string>;
}

export class ClientCore {
  readonly http: Transport;
  accountInfo?: Account;
  keys?: AccountKeys;
  readonly pins: PinStore;
  readonly rosterHeads: RosterHeadStore;
  readonly kdfMemory: KdfMemory;
  readonly inviteSecrets: InviteSecretStore;
  readonly knownVaults: KnownVaultStore;
  readonly derive: DeriveMasterKey | undefined;
  readonly checkpointEvery: number;
  readonly deviceName: string | undefined;
  /** Asked at a login of an account with a second factor (factors.ts). */
  secondFactor: SecondFactorPrompt | undefined;
  readonly deviceTokens: KeptValues<string> | undefined;
  /** Vault keys opened in this session, by vault, with the key version and the very wrap (base64) they were opened from. */
  readonly vaultKeys = new Map<string, { keyVersion: number; wrap: string; key: Bytes }>();

  constructor(opts: VaultClientOptions) {
    this.http = new Transport(opts);
    this.accountInfo = opts.account;
    this.deviceName = opts.deviceName;
    this.secondFactor = opts.secondFactor;
    this.deviceTokens = opts.deviceTokens;
    this.pins = opts.pins ?? new MemoryPinStore();
    this.rosterHeads = opts.rosterHeads ?? new MemoryRosterHeadStore();
    this.kdfMemory = opts.kdfMemory ?? new MemoryValues();
    this.inviteSecrets = opts.inviteSecrets ?? new MemoryValues();
    this.knownVaults = opts.knownVaults ?? new MemoryValues();
    this.derive = opts.deriveMasterKey;
    this.checkpointEvery = opts.checkpointEvery ?? CHECKPOINT_EVERY;
  }

  get account(): Account {
    if (!this.accountInfo) throw new ApiError(401, "UNAUTHORIZED", "not logged in");
    return this.accountInfo;
  }

  /**
   * The account key version this client's stretched key belongs to, sent with every personal
   * wrap so that none lands under a password changed meanwhile. Known from the login; for a login
   * saved by an earlier release, read from the server once, and taken only if the account's KDF
   * parameters are still the ones this client derives with: a password change always makes a new
   * salt, so other parameters mean this client holds an old key.
   */
  async accountVersion(): Promise<number> {
    const account = this.account;
    if (account.accountVersion !== undefined) return account.accountVersion;
    const me = await this.http.request<{ accountVersion: number; kdf: KdfParams }>("GET", "/users/me");
    if (!sameKdf(me.kdf, account.kdf)) throw passwordChangedElsewhere();
    this.accountInfo = { ...account, accountVersion: me.accountVersion };
    return me.accountVersion;
  }

  requireKeys(): AccountKeys {
    if (!this.keys) throw new ApiError(0, "LOCKED", "the account is locked: unlock it with the master password first");
    return this.keys;
  }
}

/** The master password was changed on another device: this client's keys are the old ones. */
export const passwordChangedElsewhere = () =>
  new ApiError(409, "CONFLICT", "your master password was changed on another device: log in again with the new one", "accountVersion");

/** The vault changed between two reads: the caller reads again. */
export const vaultMoved = () => new ApiError(409, "CONFLICT", "the vault changed while it was being read: read it again");

/** Tasks run one at a time, each after every task queued before it (whether that one failed or not). */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

/** `fn` over every item, at most `width` at a time, the answers in the items' order (the first failure fails it). */
export async function inTurns<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}
