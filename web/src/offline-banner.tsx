/**
 * What the app shows offline (offline.ts): a banner saying which copy is shown, that changes wait
 * in this browser until the server is back and how many wait, with Reconnect; and, in place of the
 * pages that need the server (everything but the item lists and a vault's items), a sentence
 * saying so. Online, the edits made offline as they are saved, then what the saving did.
 */
import { useEffect, useState } from "preact/hooks";
import type { VaultClient } from "../../sdk";
import { offlineCopyDate } from "./offline";
import { eraseWaitingEdits, saveWaitingEdits, useWaitingEdits } from "./offline-edits";
import type { ReplayReport, WaitingEdit } from "./offline-replay";
import { reconnect, refreshNow } from "./session";
import { Busy, ErrorNote, useAction } from "./components/ui";

/** A vault's tabs that need its own read (members, signed history): not offline; its items (or one open) are. */
const SERVER_TABS = new Set(["members", "history", "transfer", "trash", "settings"]);

/** The pages that read only the library, so that they show the offline copy: the item lists and a vault's items. */
export const readableOffline = (page: string, sub?: string): boolean =>
  page === "items" || (page === "vault" && (sub === undefined || !SERVER_TABS.has(sub)));

/** How often the banner asks whether the server answers again (besides when the tab comes back into view). */
const PROBE_MS = 30_000;

const edits = (n: number): string => `${n} ${n === 1 ? "edit" : "edits"}`;

export function OfflineBanner() {
  const action = useAction();
  const back = useServerAnswers();
  const { edits: waiting, problem } = useWaitingEdits();
  const saved = offlineCopyDate();
  // Edits wait: the server answering again is enough to save them.
  useEffect(() => {
    if (back && waiting.length > 0 && !action.busy) void action.run(reconnect);
  }, [back]);
  return (
    <div class="offline-banner">
      <p role="status">
        Offline: showing what this browser last synced{saved ? ` on ${saved.toLocaleString()}` : ""}. Changes made now wait in this browser
        and are saved when the server is back.{back ? " The server answers again." : ""}
      </p>
      {waiting.length > 0 && <p role="status">{waitingLine(waiting)}</p>}
      <button type="button" class="secondary" disabled={action.busy} onClick={() => void action.run(reconnect)}>
        Reconnect
      </button>
      <ErrorNote error={action.error ?? problem} />
    </div>
  );
}

const waitingLine = (waiting: readonly WaitingEdit[]): string =>
  `${edits(waiting.length)} ${waiting.length === 1 ? "waits" : "wait"} to be saved.`;

/** Online: the edits made offline as they are saved, what the saving did, and those still waiting (tried again on demand). */
export function SavedEditsReport({ client }: { client: VaultClient }) {
  const { edits: waiting, saving, report, problem } = useWaitingEdits();
  const action = useAction();
  const [dismissed, setDismissed] = useState<ReplayReport | null>(null);
  if (!saving && waiting.length === 0 && !problem && (!report || report === dismissed)) return null;
  const again = () => action.run(async () => void ((await saveWaitingEdits(client)) && refreshNow()));
  const discard = () => {
    if (confirm(`Discard the ${edits(waiting.length)} made offline that still wait? They are lost.`))
      eraseWaitingEdits(client.account.userId);
  };
  return (
    <section class="offline-banner" aria-label="Edits made offline">
      {saving && <Busy label={`Saving the ${edits(waiting.length)} made offline…`} />}
      {report && report !== dismissed && <ReportLines report={report} />}
      {!saving && waiting.length > 0 && (
        <p>
          {waitingLine(waiting)}{" "}
          <button type="button" class="secondary" disabled={action.busy} onClick={() => void again()}>
            Try again
          </button>{" "}
          <button type="button" class="secondary" onClick={discard}>
            Discard them
          </button>
        </p>
      )}
      {!saving && waiting.length === 0 && report && (
        <button type="button" class="secondary" onClick={() => setDismissed(report)}>
          Dismiss
        </button>
      )}
      <ErrorNote error={action.error ?? problem} />
    </section>
  );
}

/** What the saving did, one line per outcome, each naming its items. */
function ReportLines({ report: r }: { report: ReplayReport }) {
  const saved = r.saved + r.conflicts.length + r.restored.length + r.addedAgain.length;
  const lines = [
    `Edits made offline: ${saved} saved.`,
    r.conflicts.length > 0 &&
      `Conflict: changed meanwhile by someone else: ${r.conflicts.join(", ")}. Your version is saved; the other version is in the item's history.`,
    r.restored.length > 0 && `Moved to the trash meanwhile: ${r.restored.join(", ")}. Brought back, with your change.`,
    r.addedAgain.length > 0 &&
      `Moved to the trash meanwhile, and it could not be brought back: ${r.addedAgain.join(", ")}. Your version is added as a new item.`,
    r.notDeleted.length > 0 &&
      `Not moved to the trash, because someone changed it meanwhile: ${r.notDeleted.join(", ")}. The newer version is kept.`,
    ...r.waiting.map((w) => `Not saved, still waiting: ${w.item}: ${w.why}`),
    r.unreachable && "The server stopped answering: the other edits wait, and are saved when it answers again.",
  ].filter((l): l is string => typeof l === "string");
  return (
    <div role="status">
      <ul>
        {lines.map((l, n) => (
          <li key={n}>{l}</li>
        ))}
      </ul>
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
