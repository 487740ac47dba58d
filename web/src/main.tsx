/**
 * The web vault: the service's client in the browser, on the project's SDK, so every key is made
 * and every secret opened here. Served by the gateway itself under `/` (the API stays under
 * /api/v1); routes live in the URL fragment, so an invite token in a link never reaches a server.
 */
import { render } from "preact";
import { managesOrg } from "../../sdk";
import { useEffect } from "preact/hooks";
import "./styles.css";
import { Login } from "./pages/login";
import { Register } from "./pages/register";
import { Unlock } from "./pages/unlock";
import { Recover } from "./pages/recover";
import { findRoute, mayView, pageFor, ROUTES } from "./routes";
import { currentClient, go, idleLockMs, lock, logout, refreshNow, useRoute, useSession } from "./session";

function App() {
  const route = useRoute();
  const session = useSession();
  const [page, arg] = route;
  if (!session.client) {
    if (page === "invite" && arg) return <Register inviteToken={arg} />;
    if (page === "register") return <Register />;
    if (page === "recover") return <Recover />;
    return <Login />;
  }
  if (session.locked) return <Unlock />;
  return <Shell page={page ?? "vaults"} arg={arg} sub={route[2]} />;
}

function Shell({ page, arg, sub }: { page: string; arg?: string; sub?: string }) {
  const client = currentClient();
  const admin = managesOrg(client.account.role);
  useIdleLock();
  useEffect(() => {
    // Just recovered (pages/recover.tsx): to the Security page, to enrol again.
    if (page === "recover") go("#/security");
    else if (!findRoute(page)) go("#/vaults");
  }, [page]);
  return (
    <>
      <button type="button" class="skip" onClick={skipToContent}>
        Skip to content
      </button>
      <header>
        {/* A link to the page already shown reads it again (the hash does not change, so nothing else would). */}
        <nav aria-label="Main" onClick={(e) => sameRoute(e) && refreshNow()}>
          {ROUTES.filter((r) => r.label && mayView(r, admin)).map((r) => (
            <a key={r.path} href={`#/${r.path}`}>
              {r.label}
            </a>
          ))}
        </nav>
        <div class="who">
          <span>{client.account.email}</span>
          <button type="button" class="secondary" onClick={lock}>
            Lock
          </button>
          <button type="button" class="secondary" onClick={() => void logout()}>
            Log out
          </button>
        </div>
      </header>
      {pageFor(page, admin, arg, sub)}
    </>
  );
}

/** The first stop of the keyboard: past the navigation to the page's own content (a button: the URL fragment holds the route). */
function skipToContent(): void {
  const main = document.querySelector("main");
  if (!main) return;
  main.setAttribute("tabindex", "-1");
  main.focus();
}

/** A click on a link to the route already shown. */
function sameRoute(e: MouseEvent): boolean {
  const link = (e.target as Element | null)?.closest?.("a");
  return link?.getAttribute("href") === location.hash;
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
