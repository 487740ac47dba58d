/**
 * The web vault's one session: a `VaultClient` (the project's SDK: every key and ciphertext is
 * made and opened here, in the browser), whether it is locked, and what the browser keeps between
 * visits (localStorage): key pins with their emails, seen roster heads, each account's KDF
 * parameters, the binding secrets of the invites made here, the vaults seen listed with their
 * verified names, the last login's email; never a
 * password, key or token.
 */
import {
  VaultClient,
  type InviteSecretStore,
  type KdfMemory,
  type KeptValues,
  type KnownVaultStore,
  type PinStore,
  type RosterHeadStore,
  type VaultClientOptions,
} from "../../sdk";
import { useEffect, useState } from "preact/hooks";
import { deriveInWorker } from "./kdf";

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

/**
 * A reload asks to log in again, with the email of the last login filled in. Decided over keeping
 * the login (its refresh token sealed under a key only the password recovers): a token at rest in
 * the browser is a credential any script of this origin or anyone with the disk can take away and
 * guess the password against, and unlocking it would cost the same key derivation as logging in.
 * So nothing but the email stays, and the session a reload leaves behind expires on its own.
 */
const LAST_EMAIL = "vault.lastEmail";
export const lastEmail = (): string => localStorage.getItem(LAST_EMAIL) ?? "";
export const rememberEmail = (email: string): void => localStorage.setItem(LAST_EMAIL, email);

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
  return new VaultClient({
    ...extra,
    baseUrl: API_URL,
    pins,
    rosterHeads,
    kdfMemory,
    inviteSecrets,
    knownVaults,
    deriveMasterKey: deriveInWorker,
    deviceName: browserDeviceName(),
    // The login ended on the server (ended from another device, or a reused refresh token): back to the login page, saying so.
    onTokens: (tokens) => {
      if (tokens === undefined && session.client) ended();
    },
  });
}

interface Session {
  client: VaultClient | null;
  locked: boolean;
}

let session: Session = { client: null, locked: false };
const listeners = new Set<() => void>();

function update(next: Session): void {
  session = next;
  for (const listener of listeners) listener();
}

export function useSession(): Session {
  const [, rerender] = useState(0);
  useEffect(() => {
    const listener = () => rerender((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return session;
}

export const signedIn = (client: VaultClient) => update({ client, locked: false });

/** Forgets the keys and every opened vault key; the login stays, the password opens them again. */
export function lock(): void {
  session.client?.lock();
  if (session.client) update({ client: session.client, locked: true });
}

export const unlocked = () => update({ ...session, locked: false });

/** Set when the server ended this browser's login; the login page says so once. */
let endedNotice = false;

function ended(): void {
  endedNotice = true;
  session.client?.lock();
  update({ client: null, locked: false });
  location.hash = "#/login";
}

export function takeEndedNotice(): boolean {
  const was = endedNotice;
  endedNotice = false;
  return was;
}

export async function logout(): Promise<void> {
  const client = session.client;
  update({ client: null, locked: false });
  location.hash = "#/login";
  await client?.logout().catch(() => undefined);
}

export function currentClient(): VaultClient {
  if (!session.client) throw new Error("not signed in");
  return session.client;
}

/** The hash route: `#/vault/<id>` -> ["vault", "<id>"]. */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
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
