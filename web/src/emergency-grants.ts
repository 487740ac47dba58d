/**
 * The signed-in account's emergency access grants (`client.emergency.list`, each checked against
 * its grantor's signature), held once for the whole app: the banner (emergency-banner.tsx) and the
 * Emergency access page read the same copy, so a refusal made on either shows on both at once.
 * The banner reads them again once a minute and when the tab comes back into view: one GET each.
 */
import { useEffect } from "preact/hooks";
import type { VaultClient } from "../../sdk";
import type { EmergencyGrant } from "../../sdk/client";
import { useAction } from "./components/ui";
import { isOffline } from "./offline";
import { useListeners } from "./subscribe";

export interface Grants {
  granted: EmergencyGrant[];
  received: EmergencyGrant[];
}

interface Held {
  /** Whose grants these are: another client (a new login) reads its own. */
  owner: VaultClient | null;
  grants: Grants | null;
  /** The last read's failure, as thrown (null once a read succeeds). */
  error: unknown;
}

let held: Held = { owner: null, grants: null, error: null };
const listeners = new Set<() => void>();
/** Reads are numbered: an answer older than one already shown (a poll overtaken by an action's read) is dropped. */
let started = 0;
let shown = 0;
let inFlight: Promise<unknown> | null = null;
let lastReadAt = 0;

function update(next: Held): void {
  held = next;
  for (const l of listeners) l();
}

/** Reads the grants now (after an action: its outcome shows); throws what the read threw, after holding it. */
export async function readGrants(client: VaultClient): Promise<Grants> {
  const n = ++started;
  lastReadAt = Date.now();
  const read = client.emergency.list();
  inFlight = read;
  try {
    const grants = await read;
    if (n > shown) {
      shown = n;
      update({ owner: client, grants, error: null });
    }
    return grants;
  } catch (err) {
    if (n > shown) {
      shown = n;
      update({ owner: client, grants: held.owner === client ? held.grants : null, error: err });
    }
    throw err;
  } finally {
    if (inFlight === read) inFlight = null;
  }
}

/**
 * Polls ask only when no read runs and none ran in the last seconds (focus and visibility often fire
 * together), and not while the tab is hidden (it asks again when shown) or the app is offline (the
 * server does not answer; back online, the next poll asks).
 */
const QUIET_MS = 5_000;

function poll(client: VaultClient): void {
  if (document.visibilityState === "hidden" || isOffline()) return;
  if (held.owner === client && (inFlight || Date.now() - lastReadAt < QUIET_MS)) return;
  void readGrants(client).catch(() => undefined);
}

/** How often the grants are read again while the app is open. */
const POLL_MS = 60_000;

/** Reads the grants at once, then every minute and when the window gets focus or the tab is shown again. */
export function usePolledGrants(client: VaultClient): void {
  useEffect(() => {
    const read = () => poll(client);
    const visible = () => document.visibilityState === "visible" && read();
    read();
    const timer = setInterval(read, POLL_MS);
    addEventListener("focus", read);
    document.addEventListener("visibilitychange", visible);
    return () => {
      clearInterval(timer);
      removeEventListener("focus", read);
      document.removeEventListener("visibilitychange", visible);
    };
  }, [client]);
}

/** The grants as last read for `client` (none yet: null), re-rendering the caller on every change. */
export function useGrants(client: VaultClient): { grants: Grants | null; error: unknown } {
  useListeners(listeners);
  return held.owner === client ? held : { grants: null, error: null };
}

/**
 * An action on a grant (`run`), after which the grants are read again whatever it answered, so that
 * its outcome (or the state that refused it) shows on the page and the banner at once.
 */
export function useGrantAction(client: VaultClient) {
  const act = useAction();
  const run = (task: () => Promise<unknown>) =>
    void act.run(async () => {
      try {
        await task();
      } finally {
        await readGrants(client);
      }
    });
  return { act, run };
}
