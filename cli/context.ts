/** What every command gets: where the server is, the saved login, and a client with or without keys. */
import os from "node:os";
import { encoding, MAX_DEVICE_NAME, primitives, printable, VaultClient, type Account, type VaultClientOptions } from "../sdk";
import type { CliState } from "./state";
import { readPassword, type PasswordSources } from "./password";
import { UsageError } from "./output";

export const DEFAULT_SERVER = "http://127.0.0.1:3000/api/v1";

/**
 * The API's base URL from a server address as a person types it: `http://host:3000`, the web
 * vault's address, is `http://host:3000/api/v1`; an address that ends in `/api/v1` is kept (trailing
 * slashes dropped either way), so a login saved under either form is the same server's.
 */
export function apiBase(address: string): string {
  const trimmed = address.trim().replace(/\/+$/, "");
  return /\/api\/v1$/.test(trimmed) ? trimmed : `${trimmed}/api/v1`;
}
const SESSION_AD = "vaultctl-session/v1";
/** What a login from here is called in the account's list of sessions: this machine's name, cut to fit. */
const DEVICE_NAME = [...printable(`vaultctl on ${os.hostname()}`)].slice(0, MAX_DEVICE_NAME).join("").trim();

export class Context {
  constructor(
    readonly state: CliState,
    /** From `--server` or `VAULT_SERVER`; else the saved login's, else the default. */
    private readonly serverOption: string | undefined,
    readonly json: boolean,
    readonly progress: boolean,
    readonly passwords: PasswordSources,
    /** From `--session` or `VAULT_SESSION`. */
    private readonly session: string | undefined,
  ) {}

  get server(): string {
    return apiBase(this.serverOption ?? this.state.login?.server ?? DEFAULT_SERVER);
  }

  /** A client with no login: for register, login and invite checks. Its tokens are saved by the command once it succeeds, never into the login saved before. */
  anonymous(extra: Pick<VaultClientOptions, "secondFactor"> = {}): VaultClient {
    return new VaultClient({ baseUrl: this.server, deviceName: DEVICE_NAME, ...this.deviceMemory(this.server), ...extra });
  }

  /** What this machine remembers of one server: pins, roster heads, KDF parameters, invite secrets, known vaults. */
  private deviceMemory(server: string) {
    return {
      pins: this.state.pins(server),
      rosterHeads: this.state.rosterHeads(server),
      kdfMemory: this.state.kdfMemory(server),
      inviteSecrets: this.state.inviteSecrets(server),
      knownVaults: this.state.knownVaults(server),
    };
  }

  /** The saved login, tokens refreshed (and saved) as needed; keys still locked. */
  loggedIn(): VaultClient {
    const login = this.state.login;
    if (!login) throw new UsageError("not logged in: run `vaultctl login <email>` first");
    if (this.serverOption && this.serverOption.replace(/\/+$/, "") !== login.server) {
      throw new UsageError(`logged in to ${login.server}, not ${this.serverOption}: log in there first`);
    }
    return new VaultClient({
      baseUrl: login.server,
      account: login.account,
      tokens: login.tokens,
      ...this.deviceMemory(login.server),
      onTokens: (t) => this.state.saveTokens(t),
    });
  }

  /** The saved login with its keys open: from the `unlock` session if there is one, else the password. */
  async unlocked(): Promise<VaultClient> {
    const client = this.loggedIn();
    const stretched = await this.sessionKey(client.account);
    if (stretched) await client.unlockWithStretchedKey(stretched);
    else await client.unlock(await readPassword(this.passwords, `Master password for ${client.account.email}: `));
    return client;
  }

  /** The stretched key sealed by `unlock`, opened with the session value; undefined without one. */
  private async sessionKey(account: Account): Promise<encoding.Bytes | undefined> {
    const saved = this.state.unlocked;
    if (!this.session || !saved || saved.userId !== account.userId) return undefined;
    try {
      return await primitives.gcmDecrypt(
        encoding.fromBase64(this.session),
        encoding.fromBase64(saved.sealed),
        encoding.utf8(`${SESSION_AD}/${account.userId}`),
      );
    } catch {
      throw new UsageError(
        "VAULT_SESSION does not open the saved session (it was locked, or belongs to another unlock): run `vaultctl unlock` again",
      );
    }
  }

  /** Seals the stretched key under a new random session key and returns that key, base64. */
  async createSession(client: VaultClient): Promise<string> {
    const sessionKey = primitives.randomBytes(32);
    const sealed = await primitives.gcmEncrypt(
      sessionKey,
      client.exportStretchedKey(),
      encoding.utf8(`${SESSION_AD}/${client.account.userId}`),
    );
    this.state.saveUnlocked({ userId: client.account.userId, sealed: encoding.toBase64(sealed) });
    return encoding.toBase64(sessionKey);
  }
}
