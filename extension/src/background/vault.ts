/**
 * The extension's one session: a `VaultClient` from the project's SDK (the same code the web
 * vault and `vaultctl` run: the KDF floor and pins checked, rosters and item logs verified), its
 * lock, and the opened items the menus and the popup read. Lives in the service worker; a worker
 * Chromium stopped resumes from `chrome.storage.session` (storage.ts).
 *
 * Locks after `idleLockSeconds` without use (five minutes by default), when the computer locks,
 * and when the browser closes (the session storage is gone then).
 */
import {
  ApiError,
  InputError,
  VaultClient,
  encoding,
  type Account,
  type PasskeyAuthenticator,
  type SecondFactorAnswer,
  type SecondFactorChallenge,
  type SecondFactorPrompt,
  type Tokens,
} from "../../../sdk";
import type { PasskeySignInDone, VaultState } from "../messages";
import { OpenedItems } from "./opened-items";
import { kept, readSession, remember, remembered, setting, writeSession, type SessionRecord } from "./storage";

const pins = kept<never>("pins");
const stores = {
  pins,
  rosterHeads: kept<never>("rosterHeads"),
  kdfMemory: kept<never>("kdf"),
  inviteSecrets: kept<never>("inviteSecrets"),
  knownVaults: kept<never>("knownVaults"),
};

export const DEVICE_NAME = "Browser extension, Chromium";

let client: VaultClient | undefined;
let record: SessionRecord | undefined;
let items: OpenedItems | undefined;
let restored: Promise<void> | undefined;
/** Said once on the lock screen after the server ended the session. */
let notice: string | undefined;

/** A login waiting for its second factor: the SDK's prompt, answered by the popup's next request. */
let waitingFactor: { challenge: SecondFactorChallenge; answer: (a: SecondFactorAnswer) => void; login: Promise<void> } | undefined;

/** A passkey sign-in without the PRF, waiting for the master password: its client (signed in, locked) and server. */
let waitingPassword: { client: VaultClient; server: string; email: string } | undefined;

function newClient(server: string, resume?: { account: Account; tokens: Tokens }, secondFactor?: SecondFactorPrompt): VaultClient {
  const made: VaultClient = new VaultClient({
    ...stores,
    ...resume,
    secondFactor,
    baseUrl: `${server.replace(/\/+$/, "")}/api/v1`,
    deviceName: DEVICE_NAME,
    onTokens: async (tokens) => {
      // Only the session's own client: a passkey unlock's new login must not touch the locked one it replaces, nor its ending end this.
      if (!record || client !== made) return;
      if (tokens === undefined) return ended();
      record = { ...record, tokens };
      await writeSession(record);
    },
  });
  return made;
}

/** Brings back the session a stopped service worker left in `chrome.storage.session`, once. */
function restore(): Promise<void> {
  restored ??= (async () => {
    const saved = await readSession();
    if (!saved) return;
    record = saved;
    client = newClient(saved.server, saved);
    if (saved.stretchedKey && !(await idleExpired())) {
      await client.unlockWithStretchedKey(encoding.fromBase64(saved.stretchedKey));
      items = new OpenedItems(client);
    } else if (saved.stretchedKey) await lock();
  })().catch(async () => {
    // A session that no longer opens (its tokens ended meanwhile): signed out, nothing kept.
    await signOutLocally();
  });
  return restored;
}

async function idleExpired(): Promise<boolean> {
  if (!record) return false;
  return Date.now() - record.lastActive > (await setting("idleLockSeconds", 300)) * 1000;
}

/**
 * The person used the extension (the popup, a choice in a menu): an idle session locks first,
 * then the idle time starts again. What a page can cause (a focus, a sent form, a menu drawn)
 * does not count as use, or any page could keep the vault unlocked for ever.
 */
export async function touch(): Promise<void> {
  await restore();
  if (!record) return;
  if (client && items && (await idleExpired())) await lock();
  record = { ...record, lastActive: Date.now() };
  await writeSession(record);
}

/** The periodic check: keys do not stay in memory past the idle time, even when nothing asks. */
export async function lockIfIdle(): Promise<void> {
  await restore();
  if (items && (await idleExpired())) await lock();
}

export async function state(): Promise<VaultState> {
  await restore();
  const { server, email } = await remembered();
  if (!record || !client) {
    const said = notice;
    notice = undefined;
    return { state: "signed-out", server, email, ...(said && { notice: said }) };
  }
  if (!items) return { state: "locked", server: record.server, email: record.account.email };
  return { state: "unlocked", server: record.server, email: record.account.email };
}

/** Signs in as the other clients do; with a second factor, answers `{ secondFactor }` and waits for `answerFactor`. */
export async function login(server: string, email: string, password: string): Promise<{ secondFactor?: SecondFactorChallenge }> {
  const origin = serverAddress(server);
  let asked: ((c: SecondFactorChallenge) => void) | undefined;
  const challenged = new Promise<SecondFactorChallenge>((resolve) => (asked = resolve));
  const fresh = newClient(
    origin,
    undefined,
    (challenge) =>
      new Promise<SecondFactorAnswer>((answer) => {
        waitingFactor = { challenge, answer, login: done };
        asked!(challenge);
      }),
  );
  const done = (async () => {
    const account = await fresh.login(email, password);
    await remember({ server: origin, email: account.email });
    await signedIn(fresh, origin, account);
  })();
  const first = await Promise.race([done.then(() => undefined), challenged]);
  return first ? { secondFactor: first } : {};
}

/** The server's origin from the address typed; one without a scheme is https, as a browser's address bar takes it. */
function serverAddress(server: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(server.trim()) ? server.trim() : `https://${server.trim()}`);
  } catch {
    throw new Error(`"${server}" is not a server address: type it as https://vault.example.com`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("The server address must start with https://");
  return url.origin;
}

const UNKNOWN_PASSKEY =
  "This passkey does not sign in to an account on this server: it was removed, or its answer did not check out (a server that does not list this extension's origin in WEBAUTHN_ORIGINS refuses every passkey the extension uses). Sign in with your email and master password.";

/**
 * Signs in with a passkey (the ceremony run by the popup: `authenticator`, ceremonies.ts) at
 * `server`; without `server`, unlocks the locked login with a passkey of the same account. A
 * passkey with the PRF unlocks at once, and the extension then stands as after a password unlock
 * (the session and its stretched key kept the same way); one without it waits for the master
 * password (`passkeyPassword`). The SDK can open a passkey's unlock only with a sign-in of its own,
 * so an unlock takes a new login and ends the locked one on the server, as a sign-out would.
 */
export async function passkeySignIn(server: string | undefined, authenticator: PasskeyAuthenticator): Promise<PasskeySignInDone> {
  await restore();
  await dropWaitingPassword();
  const locked = server === undefined ? record : undefined;
  if (server === undefined && !locked) throw new Error("Not signed in: sign in first.");
  const origin = locked ? locked.server : serverAddress(server!);
  const fresh = newClient(origin);
  const result = await fresh.loginWithPasskey(authenticator).catch((err: unknown) => {
    // The server knows no such passkey (every refusal is the same 401): said for a passkey, not as a wrong password.
    if (err instanceof ApiError && err.status === 401) throw new InputError(UNKNOWN_PASSKEY);
    throw err;
  });
  const email = result.unlocked ? result.account.email : result.email;
  if (locked && email.toLowerCase() !== locked.account.email.toLowerCase()) {
    await fresh.logout().catch(() => undefined);
    throw new InputError(
      `That passkey signs in to ${email}, and the locked account here is ${locked.account.email}: use a passkey of ${locked.account.email}, or sign out first.`,
    );
  }
  if (!result.unlocked) {
    waitingPassword = { client: fresh, server: origin, email };
    return { unlocked: false, email };
  }
  await takeOver(fresh, origin, result.account);
  return { unlocked: true };
}

/** The master password for a passkey sign-in without the PRF; a wrong one is said and may be tried again. */
export async function passkeyPassword(password: string): Promise<void> {
  const waiting = waitingPassword;
  if (!waiting) throw new Error("No passkey sign-in is waiting for your master password: start again.");
  const account = await waiting.client.unlockPasskeyLogin(password);
  waitingPassword = undefined;
  await takeOver(waiting.client, waiting.server, account);
}

/** Ends a passkey sign-in waiting for the master password (the popup's Cancel, a new sign-in, a lock, a sign-out). */
export async function dropWaitingPassword(): Promise<void> {
  const waiting = waitingPassword;
  waitingPassword = undefined;
  // Its tokens were never taken up (logout would have none to send): the SDK ends the session it opened.
  await waiting?.client.cancelPasskeyLogin().catch(() => undefined);
}

/** A passkey's login becomes the extension's session, as a password login's does; the locked one it replaces ends on the server. */
async function takeOver(fresh: VaultClient, server: string, account: Account): Promise<void> {
  const previous = client;
  await remember({ server, email: account.email });
  await signedIn(fresh, server, account);
  if (previous && previous !== fresh) {
    previous.lock();
    await previous.logout().catch(() => undefined);
  }
}

/** The popup's answer to the second-factor question; a wrong code asks again (`retry`). */
export async function answerFactor(answer: SecondFactorAnswer): Promise<{ secondFactor?: SecondFactorChallenge }> {
  const waiting = waitingFactor;
  if (!waiting) throw new Error("No sign-in is waiting for a second factor: start again.");
  waitingFactor = undefined;
  let asked: ((c: SecondFactorChallenge) => void) | undefined;
  const again = new Promise<SecondFactorChallenge>((resolve) => (asked = resolve));
  const poll = setInterval(() => {
    if (waitingFactor && waitingFactor !== waiting) asked!(waitingFactor.challenge);
  }, 20);
  try {
    waiting.answer(answer);
    const next = await Promise.race([waiting.login.then(() => undefined), again]);
    return next ? { secondFactor: next } : {};
  } finally {
    clearInterval(poll);
  }
}

async function signedIn(fresh: VaultClient, server: string, account: Account): Promise<void> {
  client = fresh;
  record = {
    server,
    account,
    tokens: fresh.http.currentTokens!,
    stretchedKey: encoding.toBase64(fresh.exportStretchedKey()),
    lastActive: Date.now(),
  };
  await writeSession(record);
  items = new OpenedItems(fresh);
}

export async function unlock(password: string): Promise<void> {
  await restore();
  if (!client || !record) throw new Error("Not signed in.");
  await client.unlock(password);
  record = { ...record, stretchedKey: encoding.toBase64(client.exportStretchedKey()), lastActive: Date.now() };
  await writeSession(record);
  items = new OpenedItems(client);
}

/** What else the worker forgets at a lock or a sign-out: menus, save offers with the passwords sent, codes. */
const lockListeners: Array<() => void> = [];
export const onLock = (listener: () => void): void => void lockListeners.push(listener);
const forgetAll = () => {
  lockListeners.forEach((listener) => listener());
  void dropWaitingPassword();
};

/** Forgets every key and opened item; the login stays, the password opens it again. */
export async function lock(): Promise<void> {
  client?.lock();
  items = undefined;
  forgetAll();
  if (record) {
    const { stretchedKey: _dropped, ...rest } = record;
    record = rest;
    await writeSession(record);
  }
}

export async function logout(): Promise<void> {
  await restore();
  const leaving = client;
  await signOutLocally();
  await leaving?.logout().catch(() => undefined);
}

async function signOutLocally(): Promise<void> {
  client?.lock();
  client = undefined;
  items = undefined;
  forgetAll();
  record = undefined;
  await writeSession(undefined);
}

/** The server ended this login (from another device, or a reused refresh token): signed out, said once. */
async function ended(): Promise<void> {
  notice = "This browser's session was ended. Sign in again.";
  await signOutLocally();
}

/** The opened items, or a `LOCKED` failure: a locked extension shows and fills nothing. */
export async function opened(): Promise<OpenedItems> {
  await restore();
  if (!items) throw Object.assign(new Error("Your vault is locked. Unlock it with your master password."), { code: "LOCKED" });
  return items;
}

/** The signed-in, unlocked client, for a write the user asked for (a save, an update). */
export async function unlockedClient(): Promise<VaultClient> {
  await opened();
  return client!;
}

export async function isSignedIn(): Promise<boolean> {
  await restore();
  return record !== undefined;
}

export async function isUnlocked(): Promise<boolean> {
  await restore();
  return items !== undefined;
}

export async function serverOrigin(): Promise<string | undefined> {
  await restore();
  return record?.server;
}
