/**
 * What the extension keeps, and where. `chrome.storage.local` (on disk, kept across restarts)
 * holds only what the other clients keep in theirs: key pins, roster heads, each account's KDF
 * parameters, the vaults seen, the last server and email, settings. Never a password, a key, a
 * token or an item.
 *
 * `chrome.storage.session` (in memory, gone when the browser closes, out of content scripts'
 * reach) holds the signed-in session: the tokens, the account, and while unlocked the stretched
 * key, so that a service worker Chromium stopped and started again resumes where it was.
 */
import type { Account, KeptValues, Tokens } from "../../../sdk";

/** Values kept in `chrome.storage.local` under one key, by id. */
export function kept<T>(key: string): KeptValues<T> {
  const all = async (): Promise<Record<string, T>> => ((await chrome.storage.local.get(key))[key] as Record<string, T>) ?? {};
  return {
    get: async (id) => (await all())[id],
    set: async (id, value) => chrome.storage.local.set({ [key]: { ...(await all()), [id]: value } }),
    entries: async () => Object.entries(await all()),
  };
}

export interface Remembered {
  server: string;
  email: string;
}

export async function remembered(): Promise<Remembered> {
  const got = await chrome.storage.local.get(["server", "email"]);
  return { server: (got.server as string) ?? "", email: (got.email as string) ?? "" };
}

export const remember = (r: Remembered): Promise<void> => chrome.storage.local.set(r);

/** Seconds from `chrome.storage.local` (a test or an admin shortens them), else the default. */
export async function setting(key: "idleLockSeconds" | "clipboardClearSeconds", fallback: number): Promise<number> {
  const value = Number((await chrome.storage.local.get(key))[key]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The signed-in session, in `chrome.storage.session`. */
export interface SessionRecord {
  server: string;
  account: Account;
  tokens: Tokens;
  /** Base64, only while unlocked. */
  stretchedKey?: string;
  /** When the user last did something with the extension (ms). */
  lastActive: number;
}

export async function readSession(): Promise<SessionRecord | undefined> {
  return (await chrome.storage.session.get("session")).session as SessionRecord | undefined;
}

export const writeSession = (record: SessionRecord | undefined): Promise<void> =>
  record ? chrome.storage.session.set({ session: record }) : chrome.storage.session.remove("session");
