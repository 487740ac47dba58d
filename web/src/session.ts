/**
 * The web vault's one session: a `VaultClient` (the project's SDK: every key and ciphertext is
 * made and opened here, in the browser), whether it is locked, and what the browser keeps between
 * visits (localStorage): key pins with their emails, seen roster heads, each account's KDF
 * parameters, the binding secrets of the invites made here, the vaults seen listed with their
 * verified names, the last login's email, the remembered-device token of each account that asked
 * for one at its second step, and the login itself, locked (below); never a password, an unwrapped
 * key or a token in the clear.
 */
import { useListeners } from "./subscribe";
import {
  ApiError,
  VaultClient,
  WEB_SESSION_SEAL_CONTEXT,
  isKeptSession,
  openKept,
  sealKept,
  type Account,
  type KeptSession,
  type SealKey,
  type InviteSecretStore,
  type KdfMemory,
  type KeptValues,
  type KnownVaultStore,
  type Tokens,
  type PinStore,
  type RosterHeadStore,
  type VaultClientOptions,
} from "../../sdk";
import { useEffect, useState } from "preact/hooks";
import { deriveInWorker } from "./kdf";
import { eraseOfflineCopy, isOffline, leaveOffline, openOfflineCopy } from "./offline";
import { clearLibrary } from "./library";

export const API_URL = `${location.origin}/api/v1`;

/** Values kept in the browser's storage under `key`, by id. */
function stored<T>(key: string): KeptValues<T> {
  const all = (): Record<string, T> => {
    try {
      return JSON.parse(localStorage.getItem(key) ?? "{}") as Record<string, T>;
    } catch {
      return {};
    }
  };
  return {
    get: async (id) => all()[id],
    set: async (id, value) => localStorage.setItem(key, JSON.stringify({ ...all(), [id]: value })),
    entries: async () => Object.entries(all()),
  };
}

export const pins: PinStore = stored("vault.pins");
export const rosterHeads: RosterHeadStore = stored("vault.rosterHeads");
export const kdfMemory: KdfMemory = stored("vault.kdf");
export const inviteSecrets: InviteSecretStore = stored("vault.inviteSecrets");
/** The vaults this browser saw listed, per account, with their verified names (a vault left out later is asked about). */
export const knownVaults: KnownVaultStore = stored("vault.knownVaults");

/** The email of the last login, filled in on the login page. */
const LAST_EMAIL = "vault.lastEmail";
export const lastEmail = (): string => localStorage.getItem(LAST_EMAIL) ?? "";
export const rememberEmail = (email: string): void => localStorage.setItem(LAST_EMAIL, email);

/**
 * The token a second step answered when asked to remember this browser, by email. Not a password:
 * alone it does nothing; with the right password it skips the second step until it expires (30
 * days), the account forgets it (its Sessions page), or its password or factors change.
 */
export const deviceTokens: KeptValues<string> = stored("vault.deviceTokens");

/**
 * A reload keeps the login, locked: the lock screen asks the master password, and the same session
 * goes on (no new session, no second step). At rest in localStorage: the account as the login
 * verified it (email, id, KDF parameters, the private keys wrapped under the password's key, as
 * the server holds them) and the session's tokens SEALED (AES-256-GCM, the context
 * "web-session-seal-v1" and the account's id as associated data) under a key HKDF derives from
 * the key the password stretches to (sdk/client/kept-session.ts). So what is kept lets no one act
 * as the user without the password, and guessing the password from it costs the account's KDF per
 * guess, exactly as guessing it from the wrapped keys the server serves to anyone who logs in. A
 * script running in this origin could read it: it could as well read the password as it is typed.
 * Logging out (here, or on a kept login's lock screen) erases it; so does a session the server
 * ended (found at the next refresh or unlock). Locking, by hand or when idle, keeps it. The server
 * decides nothing of what is kept: only the tokens it rotates are sealed again.
 */
const KEPT = "vault.session";

function readKept(): KeptSession | null {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(KEPT) ?? "null");
    return isKeptSession(value) && value.context === WEB_SESSION_SEAL_CONTEXT ? value : null;
  } catch {
    return null;
  }
}

/** Set while this page can seal the session's tokens: the key the password gave, and the account they belong to. */
let sealing: { key: SealKey; account: Account } | null = null;
/** Set while tokens another tab sealed are taken up: not sealed again. */
let syncing = false;

async function sealTokens(tokens: Tokens): Promise<void> {
  const by = sealing;
  if (!by || syncing) return;
  const sealed = JSON.stringify(await sealKept(by.key, WEB_SESSION_SEAL_CONTEXT, by.account, tokens));
  // Erased meanwhile (a log out while it sealed): not written back, or the next visit would find the login kept.
  if (sealing === by) localStorage.setItem(KEPT, sealed);
}

/** Bumped by every erase: a seal that began before it (the second's `keepCurrent`, a refresh) is not set up after it. */
let erasures = 0;

/** What this browser kept of the login, and its offline copy (offline.ts): on log out, or a session the server ended. */
function eraseKept(userId = session.client?.account.userId ?? session.kept?.account.userId): void {
  erasures++;
  sealing = null;
  localStorage.removeItem(KEPT);
  if (userId) eraseOfflineCopy(userId);
}

/** A login (or registration, or recovery) just signed in: kept, sealed under its password's key. */
async function keep(client: VaultClient): Promise<void> {
  const before = erasures;
  const key = await client.sealKey(WEB_SESSION_SEAL_CONTEXT);
  // Logged out while the key was derived: nothing is kept again.
  if (erasures !== before) return;
  sealing = { key, account: client.account };
  const tokens = client.http.currentTokens;
  if (tokens) await sealTokens(tokens);
}

/**
 * The account changed in this session (a password change, a key rotation: the SDK replaces its
 * account): sealed again, under the new password's key and with the new wrapped keys, so that the
 * lock screen after a reload opens with the password as it is now.
 */
async function keepCurrent(): Promise<void> {
  const client = session.client;
  if (!client?.unlocked || !sealing || client.account === sealing.account) return;
  await keep(client);
}
setInterval(() => void keepCurrent().catch(() => undefined), 1000);

/**
 * Another tab of this vault rotated the session's tokens: taken up here, so that this tab does not
 * present a used refresh token (which would end the session everywhere).
 */
window.addEventListener("storage", (e: StorageEvent) => {
  if (e.key !== KEPT || !e.newValue || !sealing || !session.client) return;
  const { key, account } = sealing;
  const client = session.client;
  void (async () => {
    const kept: unknown = JSON.parse(e.newValue!);
    if (!isKeptSession(kept) || kept.account.userId !== account.userId) return;
    const tokens = await openKept(key, kept);
    if (tokens.refreshToken === client.http.currentTokens?.refreshToken) return;
    syncing = true;
    try {
      await client.http.setTokens(tokens);
    } finally {
      syncing = false;
    }
  })().catch(() => undefined);
});

/** Seconds, from localStorage (a test or an admin shortens them), else the default. */
function seconds(key: string, fallback: number): number {
  const value = Number(localStorage.getItem(key));
  return Number.isFinite(value) && value > 0 ? value : fallback;
}
export const idleLockMs = () => seconds("vault.idleLockSeconds", 300) * 1000;
export const clipboardClearMs = () => seconds("vault.clipboardClearSeconds", 30) * 1000;

/** What this browser is called in the account's list of sessions: the web vault, and the browser by name. */
export function browserDeviceName(userAgent = navigator.userAgent): string {
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /Firefox\//.test(userAgent)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(userAgent)
        ? "Chromium-based browser"
        : /Safari\//.test(userAgent)
          ? "Safari"
          : "a browser";
  const os = /Windows/.test(userAgent)
    ? " on Windows"
    : /Mac OS X/.test(userAgent)
      ? " on macOS"
      : /Linux/.test(userAgent)
        ? " on Linux"
        : "";
  return `Web vault, ${browser}${os}`;
}

export function newClient(extra: Pick<VaultClientOptions, "secondFactor"> = {}): VaultClient {
  const self: { client?: VaultClient } = {};
  self.client = new VaultClient(clientOptions(extra, () => self.client));
  return self.client;
}

/** A client's options; `self` answers the client they were made for, once it exists (its token events then follow it alone). */
function clientOptions(extra: Pick<VaultClientOptions, "secondFactor">, self: () => VaultClient | undefined): VaultClientOptions {
  return {
    ...extra,
    baseUrl: API_URL,
    pins,
    rosterHeads,
    kdfMemory,
    inviteSecrets,
    knownVaults,
    deriveMasterKey: deriveInWorker,
    deviceName: browserDeviceName(),
    deviceTokens,
    onTokens: async (tokens) => {
      // A client this page no longer uses (the locked login a passkey replaced): its tokens are not the kept login's.
      const mine = self();
      if (mine && session.client && mine !== session.client) return;
      // The login ended on the server (ended from another device, or a reused refresh token): back to the login page, saying so.
      if (tokens === undefined) {
        if (session.client) ended();
      } else await sealTokens(tokens);
    },
  };
}

interface Session {
  client: VaultClient | null;
  locked: boolean;
  /** A login this browser kept, locked (the lock screen after a reload), while no client is signed in. */
  kept: KeptSession | null;
}

let session: Session = { client: null, locked: false, kept: readKept() };
const listeners = new Set<() => void>();

function update(next: Session): void {
  session = next;
  for (const listener of listeners) listener();
}

export function useSession(): Session {
  useListeners(listeners);
  return session;
}

/**
 * Signed in; the login kept, sealed under the key of the keys just opened, before the shell shows:
 * a reload the moment the vault appears finds the lock screen, not the login form.
 */
export async function signedIn(client: VaultClient): Promise<void> {
  await keep(client).catch(() => eraseKept(client.account.userId));
  update({ client, locked: false, kept: null });
}

/**
 * The lock screen opened with a passkey. The SDK opens a passkey's unlock only at a sign-in, so the
 * new login takes the locked one's place (sealed and kept as any login), and the locked one ends on
 * the server when this page still holds its tokens (after a reload they are sealed: it expires).
 */
export async function replaceLocked(client: VaultClient): Promise<void> {
  const previous = session.client;
  await signedIn(client);
  if (previous && previous !== client) await previous.logout().catch(() => undefined);
}

/** Forgets the keys and every opened vault key; the login stays (kept as it is), the password opens them again. */
export function lock(): void {
  session.client?.lock();
  if (isOffline()) {
    // Offline, the kept login's lock screen: its unlock tries the server first again.
    leaveOffline();
    sealing = null;
    return update({ client: null, locked: false, kept: readKept() });
  }
  if (session.client) update({ ...session, locked: true });
}

export const unlocked = () => update({ ...session, locked: false });

/**
 * The kept login resumed with the master password (`VaultClient.resume`): the same session, no
 * second step. A wrong password throws as an unlock does. A session the server ended meanwhile
 * (or that expired) erases what was kept and goes to the login page, which says why.
 */
export async function resumeKept(password: string): Promise<void> {
  const kept = session.kept;
  if (!kept) throw new Error("no kept session");
  let client: VaultClient;
  const self: { client?: VaultClient } = {};
  try {
    client = self.client = await VaultClient.unlockKept(
      clientOptions({}, () => self.client),
      kept,
      password,
      {
        sealKey: (key) => (sealing = { key, account: kept.account }),
      },
    );
  } catch (err) {
    sealing = null;
    throw err;
  }
  try {
    await client.http.refresh();
  } catch (err) {
    // The server cannot be reached (not a refusal): the offline copy, its edits waiting, if this browser holds one (offline.ts).
    if (err instanceof ApiError && err.status === 0 && (await openOfflineCopy(client).catch(() => false))) {
      if (!/^#\/(items|vault)\b/.test(location.hash)) location.hash = "#/items";
      update({ client, locked: false, kept: null });
      return;
    }
    client.lock();
    sealing = null;
    if (!(err instanceof ApiError && err.status === 401)) throw err;
    eraseKept(kept.account.userId);
    endedNotice = KEPT_ENDED;
    update({ client: null, locked: false, kept: null });
    location.hash = "#/login";
    return;
  }
  update({ client, locked: false, kept: null });
}

/**
 * Offline (offline.ts), the server answers again: the same session refreshed, the app back to
 * what the server holds. Throws `ApiError` 0 while the server still cannot be reached; a session
 * ended meanwhile goes to the login page, as at any refresh.
 */
export async function reconnect(): Promise<void> {
  const client = currentClient();
  await client.http.refresh();
  leaveOffline();
  // The library read again from the server: the Shell's pages follow it.
  clearLibrary();
  refreshNow();
}

/** The kept login's lock screen left without the password: what was kept is erased (the session, unusable without it, expires on the server). */
export function forgetKept(): void {
  eraseKept(session.kept?.account.userId);
  update({ client: null, locked: false, kept: null });
  location.hash = "#/login";
}

/** Set when the server ended this browser's login: the login page says it once. */
let endedNotice: string | null = null;
const ENDED = "This browser's session was ended (from another device, or because its login was used twice). Log in again.";
const KEPT_ENDED =
  "The session this browser kept has ended (it was ended from another device, or it expired), so it was erased from this browser. Log in again.";

function ended(): void {
  endedNotice = ENDED;
  leaveOffline();
  eraseKept();
  session.client?.lock();
  update({ client: null, locked: false, kept: null });
  location.hash = "#/login";
}

export function takeEndedNotice(): string | null {
  const was = endedNotice;
  endedNotice = null;
  return was;
}

export async function logout(): Promise<void> {
  const client = session.client;
  eraseKept();
  leaveOffline();
  update({ client: null, locked: false, kept: null });
  location.hash = "#/login";
  await client?.logout().catch(() => undefined);
}

export function currentClient(): VaultClient {
  if (!session.client) throw new Error("not signed in");
  return session.client;
}

/** A route's part as written, decoded; a malformed escape (a link cut short, or crafted) is kept as it is rather than breaking the page. */
function decodedPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The hash route: `#/vault/<id>` -> ["vault", "<id>"]. */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodedPart);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export const go = (hash: string) => void (location.hash = hash);

/**
 * When a page reads the server again: when the tab comes back into view or regains focus, and when
 * a link to the page already shown is followed (the hash does not change, so nothing else would
 * tell). Pages put `useRefresh()` among their effect's dependencies: a vault shared meanwhile then
 * shows without a reload.
 */
let refreshes = 0;
const refreshListeners = new Set<() => void>();

export function refreshNow(): void {
  refreshes++;
  for (const listener of refreshListeners) listener();
}

addEventListener("focus", refreshNow);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") refreshNow();
});

export function useRefresh(): number {
  const [seen, setSeen] = useState(refreshes);
  useEffect(() => {
    const listener = () => setSeen(refreshes);
    refreshListeners.add(listener);
    return () => void refreshListeners.delete(listener);
  }, []);
  return seen;
}
