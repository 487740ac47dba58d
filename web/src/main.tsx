/**
 * The web vault: the service's client in the browser, on the project's SDK, so every key is made
 * and every secret opened here. Served by the gateway itself under `/` (the API stays under
 * /api/v1); routes live in the URL fragment, so an invite token in a link never reaches a server.
 */
import { render } from "preact";
import { managesOrg } from "../../sdk";
import { useEffect, useState } from "preact/hooks";
import "./styles.css";
import { Login } from "./pages/login";
import { Register } from "./pages/register";
import { Unlock } from "./pages/unlock";
import { Recover } from "./pages/recover";
import { findRoute, pageFor } from "./routes";
import { currentClient, go, idleLockMs, lock, logout, refreshNow, useRoute, useSession } from "./session";
import { Sidebar } from "./components/sidebar";
import { clearLibraryOf } from "./library";
import { applyTheme, savedTheme, THEMES, type Theme } from "./theme";
import { useShortcut } from "./pages/vault/items";
import { useOffline } from "./offline";
import { NotOffline, OfflineBanner, readableOffline, SavedEditsReport } from "./offline-banner";
import { forgetWaitingEdits, leaveWaitingEdits, saveWaitingEdits } from "./offline-edits";
import { OpenSendPage } from "./pages/send/lazy";
import { EmergencyBanner } from "./emergency-banner";

applyTheme();

function App() {
  const route = useRoute();
  const session = useSession();
  const [page, arg] = route;
  // A send's link opens for anyone, without a login (none is used or changed); signed in and unlocked, inside the app (routes.tsx).
  if (page === "send" && (!session.client || session.locked))
    return <OpenSendPage key={`${arg}/${route[2]}`} sendId={arg ?? ""} secret={route[2] ?? ""} />;
  if (!session.client) {
    if (page === "invite" && arg) return <Register inviteToken={arg} />;
    if (page === "register") return <Register />;
    if (page === "recover") return <Recover />;
    // A login this browser kept, locked: its lock screen (session.ts).
    if (session.kept) return <Unlock />;
    return <Login />;
  }
  if (session.locked) return <Unlock />;
  return <Shell page={page ?? "vaults"} arg={arg} sub={route[2]} />;
}

function Shell({ page, arg, sub }: { page: string; arg?: string; sub?: string }) {
  const client = currentClient();
  const admin = managesOrg(client.account.role);
  const offline = useOffline();
  useIdleLock();
  // What was opened while unlocked goes with the keys: on lock and log-out this unmounts.
  // Only this client's: effects run children first, so a new client's library (the sidebar's) may already be filling.
  useEffect(() => () => clearLibraryOf(client), [client]);
  useEffect(() => () => forgetWaitingEdits(client.account.userId), [client]);
  // Online, edits made offline (offline-edits.ts) are saved: after Reconnect, and at any unlock or login that finds some waiting.
  useEffect(() => {
    if (!offline) void saveWaitingEdits(client).then((changed) => changed && refreshNow());
  }, [client, offline]);
  useShortcut("/", focusSearch);
  useEffect(() => {
    // Just recovered (pages/recover.tsx): to the Security page, to enrol again.
    if (page === "recover") go("#/security");
    else if (!findRoute(page)) go("#/vaults");
  }, [page]);
  const here = `#/${[page, arg, sub]
    .filter(Boolean)
    .map((p) => encodeURIComponent(p!))
    .join("/")}`;
  return (
    <>
      <button type="button" class="skip" onClick={skipToContent}>
        Skip to content
      </button>
      <header>
        <a class="brand" href="#/items">
          Vault
        </a>
        <div class="who">
          <span>{client.account.email}</span>
          <ThemeChoice />
          <button type="button" class="secondary" onClick={lock}>
            Lock
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => void leaveWaitingEdits(client.account.userId).then((ok) => (ok ? logout() : undefined))}
          >
            Log out
          </button>
        </div>
      </header>
      {offline ? <OfflineBanner /> : <SavedEditsReport client={client} />}
      {!offline && <EmergencyBanner client={client} />}
      <div class="app">
        <Sidebar client={client} current={here} />
        {offline && !readableOffline(page, sub) ? <NotOffline /> : pageFor(page, admin, arg, sub)}
      </div>
    </>
  );
}

function ThemeChoice() {
  const [theme, setTheme] = useState<Theme>(savedTheme);
  return (
    <select
      aria-label="Theme"
      value={theme}
      onChange={(e) => {
        const next = (e.currentTarget as HTMLSelectElement).value as Theme;
        applyTheme(next);
        setTheme(next);
      }}
    >
      {THEMES.map(([value, label]) => (
        <option key={value} value={value}>
          {label}
        </option>
      ))}
    </select>
  );
}

/** The first stop of the keyboard: past the navigation to the page's own content (a button: the URL fragment holds the route). */
function skipToContent(): void {
  const main = document.querySelector("main");
  if (!main) return;
  main.setAttribute("tabindex", "-1");
  main.focus();
}

/** "/": to the page's search field. */
function focusSearch(): void {
  document.querySelector<HTMLInputElement>('main input[type="search"]')?.focus();
}

/** Locks after a while without a key press, click or touch. */
function useIdleLock(): void {
  useEffect(() => {
    let timer = setTimeout(lock, idleLockMs());
    const reset = () => {
      clearTimeout(timer);
      timer = setTimeout(lock, idleLockMs());
    };
    const events = ["pointerdown", "keydown", "wheel", "touchstart"] as const;
    for (const e of events) addEventListener(e, reset, { passive: true });
    return () => {
      clearTimeout(timer);
      for (const e of events) removeEventListener(e, reset);
    };
  }, []);
}

render(<App />, document.getElementById("app")!);
