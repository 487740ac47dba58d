/**
 * The web vault: the service's client in the browser, on the project's SDK, so every key is made
 * and every secret opened here. Served by the gateway itself under `/` (the API stays under
 * /api/v1); routes live in the URL fragment, so an invite token in a link never reaches a server.
 */
import { render } from "preact";
import { managesOrg } from "../../sdk";
import { useEffect } from "preact/hooks";
import "./styles.css";
import { Login, Register, Unlock } from "./pages/account";
import { OwnKey } from "./pages/keys";
import { Audit, Invites } from "./pages/admin";
import { Sessions } from "./pages/sessions";
import { ChangePassword } from "./pages/password";
import { People } from "./pages/people";
import { Security } from "./pages/security";
import { Recover } from "./pages/recover";
import { VaultPage } from "./pages/vaults/vault";
import { Vaults } from "./pages/vaults/vault-list";
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
    else if (!["vaults", "vault", "invites", "audit", "key", "sessions", "password", "people", "security"].includes(page)) go("#/vaults");
  }, [page]);
  return (
    <>
      <header>
        {/* A link to the page already shown reads it again (the hash does not change, so nothing else would). */}
        <nav aria-label="Main" onClick={(e) => sameRoute(e) && refreshNow()}>
          <a href="#/vaults">Vaults</a>
          {admin && <a href="#/invites">Invites</a>}
          {admin && <a href="#/audit">Audit log</a>}
          {admin && <a href="#/people">People</a>}
          <a href="#/key">Your key</a>
          <a href="#/sessions">Sessions</a>
          <a href="#/password">Password</a>
          <a href="#/security">Security</a>
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
      {page === "vault" && arg ? (
        <VaultPage vaultId={arg} itemId={sub} />
      ) : page === "invites" && admin ? (
        <Invites />
      ) : page === "audit" && admin ? (
        <Audit />
      ) : page === "people" && admin ? (
        <People />
      ) : page === "key" ? (
        <OwnKey />
      ) : page === "sessions" ? (
        <Sessions />
      ) : page === "password" ? (
        <ChangePassword />
      ) : page === "security" ? (
        <Security />
      ) : (
        <Vaults />
      )}
    </>
  );
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
