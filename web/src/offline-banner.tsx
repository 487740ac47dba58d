/**
 * What the app shows offline (offline.ts): a banner saying which copy is shown and that nothing can
 * change until the server is back, with Reconnect; and, in place of the pages that need the server
 * (everything but the item lists and a vault's items), a sentence saying so.
 */
import { useEffect, useState } from "preact/hooks";
import { offlineCopyDate } from "./offline";
import { reconnect } from "./session";
import { ErrorNote, useAction } from "./components/ui";

/** A vault's tabs that need its own read (members, signed history): not offline; its items (or one open) are. */
const SERVER_TABS = new Set(["members", "history", "transfer", "trash", "settings"]);

/** The pages that read only the library, so that they show the offline copy: the item lists and a vault's items. */
export const readableOffline = (page: string, sub?: string): boolean =>
  page === "items" || (page === "vault" && (sub === undefined || !SERVER_TABS.has(sub)));

/** How often the banner asks whether the server answers again (besides when the tab comes back into view). */
const PROBE_MS = 30_000;

export function OfflineBanner() {
  const action = useAction();
  const back = useServerAnswers();
  const saved = offlineCopyDate();
  return (
    <div class="offline-banner">
      <p role="status">
        Offline: showing what this browser last synced{saved ? ` on ${saved.toLocaleString()}` : ""}. Nothing can be changed until the
        server is back.{back ? " The server answers again." : ""}
      </p>
      <button type="button" class="secondary" disabled={action.busy} onClick={() => void action.run(reconnect)}>
        Reconnect
      </button>
      <ErrorNote error={action.error} />
    </div>
  );
}

/** Whether the server answered the last probe (a HEAD of the page, which the service worker leaves to the network). */
function useServerAnswers(): boolean {
  const [answers, setAnswers] = useState(false);
  useEffect(() => {
    const probe = () =>
      void fetch("/", { method: "HEAD", cache: "no-store" })
        .then((res) => setAnswers(res.ok))
        .catch(() => setAnswers(false));
    const visible = () => document.visibilityState === "visible" && probe();
    const timer = setInterval(probe, PROBE_MS);
    addEventListener("focus", probe);
    document.addEventListener("visibilitychange", visible);
    return () => {
      clearInterval(timer);
      removeEventListener("focus", probe);
      document.removeEventListener("visibilitychange", visible);
    };
  }, []);
  return answers;
}

/** A page that needs the server, offline. */
export function NotOffline() {
  return (
    <main>
      <h1>Not available offline</h1>
      <p>
        This page needs the server. Offline, your items are listed under <a href="#/items">All items</a> and in each vault.
      </p>
    </main>
  );
}
