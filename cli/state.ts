// What vaultctl keeps on disk: one owner-only directory (login, pins, heads, KDF, invites, unlock).
// Design: docs/design/cli-state.md
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  Account,
  InviteSecretStore,
  KdfMemory,
  KeptValues,
  KnownVaultStore,
  PinStore,
  RememberedKdf,
  RosterHead,
  RosterHeadStore,
  Tokens,
} from "../sdk";

export interface SavedLogin {
  server: string;
  account: Account;
  tokens: Tokens;
}

/** The two-part commands whose first part leaves something for the second. */
type PendingName = "totp-setup" | "recovery" | "attach";

export function cliHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.VAULTCTL_HOME) return path.resolve(env.VAULTCTL_HOME);
  const base = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(os.homedir(), ".config");
  return path.join(base, "vaultctl");
}

export class CliState {
  constructor(readonly dir: string) {}

  private file(name: string): string {
    return path.join(this.dir, name);
  }

  private read<T>(name: string): T | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.file(name), "utf8")) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new Error(`${this.file(name)} is unreadable: ${(err as Error).message}`);
    }
  }

  /** Written whole or not at all (temp file, then rename), readable by the owner only. */
  private write(name: string, value: unknown): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const target = this.file(name);
    const temp = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
    fs.chmodSync(temp, 0o600);
    fs.renameSync(temp, target);
  }

  private remove(name: string): void {
    fs.rmSync(this.file(name), { force: true });
  }

  get login(): SavedLogin | undefined {
    return this.read<SavedLogin>("login.json");
  }

  saveLogin(login: SavedLogin): void {
    this.write("login.json", login);
  }

  /** A rotated token pair; `undefined` when the login ended. */
  saveTokens(tokens: Tokens | undefined): void {
    const login = this.login;
    if (!login) return;
    if (tokens) this.saveLogin({ ...login, tokens });
    else this.forgetLogin();
  }

  forgetLogin(): void {
    this.remove("login.json");
    this.remove("unlocked.json");
  }

  get unlocked(): { userId: string; sealed: string } | undefined {
    return this.read("unlocked.json");
  }

  saveUnlocked(value: { userId: string; sealed: string }): void {
    this.write("unlocked.json", value);
  }

  forgetUnlocked(): void {
    this.remove("unlocked.json");
  }

  /**
   * What a two-part command keeps between its parts (0600): an authenticator app's setup until a
   * code confirms it (`totp-setup`), an account recovery's one-time key until it finishes (`recovery`),
   * a file's upload until it is named in its item (`attach`: the file key, which opens only that file,
   * kept beside the path of the file it seals).
   */
  pending<T>(name: PendingName): T | undefined {
    return this.read(`${name}.json`);
  }

  savePending(name: PendingName, value: unknown): void {
    this.write(`${name}.json`, value);
  }

  forgetPending(name: PendingName): void {
    this.remove(`${name}.json`);
  }

  /** Roster heads seen on one server: a server that later shows an older or different chain is refused. */
  rosterHeads(server: string): RosterHeadStore {
    const kept = this.perServer<RosterHead>("heads.json", server);
    return {
      ...kept,
      // Forward only, as the file is now: another vaultctl process may have seen a newer head meanwhile.
      set: async (vaultId, head) => {
        const onFile = await kept.get(vaultId);
        if (!onFile || head.seq > onFile.seq) await kept.set(vaultId, head);
      },
    };
  }

  /** Pins of one server: user ids are only unique per server. */
  pins(server: string): PinStore {
    return this.perServer("pins.json", server);
  }

  /**
   * KDF parameters remembered per account of one server. A machine that logged in with an earlier
   * release (which kept no such file) remembers what its saved login derived with.
   */
  kdfMemory(server: string): KdfMemory {
    const kept = this.perServer<RememberedKdf>("kdf.json", server);
    return {
      ...kept,
      get: async (email) => {
        const remembered = await kept.get(email);
        if (remembered) return remembered;
        const login = this.login;
        if (login?.server !== server || login.account.email !== email) return undefined;
        return { kdf: login.account.kdf, userId: login.account.userId, signingPublicKey: login.account.signingPublicKey, version: 1 };
      },
    };
  }

  /** The binding secrets of the invites made on this machine, per server. */
  inviteSecrets(server: string): InviteSecretStore {
    return this.perServer("invites.json", server);
  }

  /**
   * The vaults this machine saw listed, per account, with the names their signed rosters gave them:
   * a vault left out of a later listing, or its name on another vault, is refused until confirmed
   * (`vaultctl vault forget`). A directory an earlier release made starts from the next listing.
   */
  knownVaults(server: string): KnownVaultStore {
    return this.perServer("vaults.json", server);
  }

  /** Values kept in `file` under each server's address (ids are only unique per server). */
  private perServer<T>(file: string, server: string): KeptValues<T> {
    const all = () => this.read<Record<string, Record<string, T>>>(file) ?? {};
    return {
      get: async (id) => all()[server]?.[id],
      set: async (id, value) => {
        const values = all();
        values[server] = { ...values[server], [id]: value };
        this.write(file, values);
      },
      entries: async () => Object.entries(all()[server] ?? {}),
    };
  }
}
