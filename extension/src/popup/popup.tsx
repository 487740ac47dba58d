/**
 * The toolbar popup: sign in, unlock (with the master password or a passkey), search every vault,
 * copy a username, a password or the current one-time code (the clipboard is cleared after 30 s),
 * the account's passkeys for signing in, lock, and a link to the web vault for everything else. Locked, it shows the lock screen and nothing else. It holds no key: every
 * answer comes from the service worker.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ask, type PasskeySignInDone, type VaultState } from "../messages";
import { AccountPasskeys, PasskeyButton, PasskeyPassword } from "./account-passkeys";
import { Items } from "./items";
import { SignIn } from "./sign-in";
import "../styles.css";

function Popup() {
  const [state, setState] = useState<VaultState | undefined>();
  const [error, setError] = useState<string | undefined>();
  const refresh = () => ask<VaultState>({ kind: "state" }).then(setState, (err: Error) => setError(err.message));
  useEffect(() => void refresh(), []);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!state) return <p class="meta">Loading…</p>;
  if (state.state === "signed-out") return <SignIn state={state} done={refresh} />;
  if (state.state === "locked") return <Unlock state={state} done={refresh} />;
  return <Unlocked state={state} done={refresh} />;
}

function Unlock({ state, done }: { state: VaultState; done: () => void }) {
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  /** A passkey without the PRF signed in again: its master password unlocks. */
  const [waiting, setWaiting] = useState<string | undefined>();
  const byPasskey = (result: PasskeySignInDone) => (result.unlocked ? done() : setWaiting(result.email));
  if (waiting) return <PasskeyPassword email={waiting} done={done} cancel={() => setWaiting(undefined)} />;
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await ask({ kind: "unlock", password });
      done();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit}>
      <h1>Vault is locked</h1>
      <p class="meta">
        {state.email} on {state.server}
      </p>
      <div class="field">
        <label for="password">Master password</label>
        <input
          id="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="spread">
        <button type="submit" disabled={busy}>
          {busy ? "Unlocking…" : "Unlock"}
        </button>
        <button type="button" class="secondary" onClick={() => ask({ kind: "logout" }).then(done)}>
          Sign out
        </button>
      </div>
      <PasskeyButton label="Unlock with a passkey" disabled={busy} onDone={byPasskey} />
    </form>
  );
}

function Unlocked({ state, done }: { state: Extract<VaultState, { state: "unlocked" }>; done: () => void }) {
  const [webVault, setWebVault] = useState<string | undefined>();
  const [passkeys, setPasskeys] = useState(false);
  useEffect(() => void ask<{ url?: string }>({ kind: "web-vault-url" }).then((r) => setWebVault(r.url)), []);
  if (passkeys) return <AccountPasskeys back={() => setPasskeys(false)} />;
  return (
    <>
      <div class="spread">
        <h1>Vault</h1>
        <div class="row">
          <button type="button" class="secondary" onClick={() => setPasskeys(true)}>
            Passkeys
          </button>
          <button type="button" class="secondary" onClick={() => ask({ kind: "lock" }).then(done)}>
            Lock
          </button>
        </div>
      </div>
      <p class="meta">{state.email}</p>
      <Items />
      {webVault && (
        <p>
          <a href={webVault} target="_blank" rel="noreferrer">
            Open the web vault
          </a>
        </p>
      )}
    </>
  );
}

render(<Popup />, document.getElementById("app")!);
