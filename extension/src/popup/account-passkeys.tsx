/**
 * The popup's passkeys for the account (not the passkeys kept as items): the "Sign in with a
 * passkey" / "Unlock with a passkey" button, the master password prompt after a passkey without
 * the PRF, and, unlocked, the list of the account's passkeys with Remove, and a form to add one
 * (its name and the master password). Each ceremony runs here (passkey-ceremony.ts); the service
 * worker holds the session and the keys.
 */
import { useEffect, useState } from "preact/hooks";
import { ask, type AccountPasskeyView, type PasskeySignInDone } from "../messages";
import { keepWorkerAwake, throughCeremonies } from "./passkey-ceremony";

// The popup closed (or moved away) mid-flow: the worker refuses the ceremony waiting and ends a sign-in waiting for the password.
addEventListener("pagehide", () => void chrome.runtime.sendMessage({ kind: "account-passkey-cancel" }).catch(() => undefined));

/**
 * The passkey button of the sign-in form (`server` given) or of the lock screen. Answers the
 * outcome: unlocked, or waiting for the master password of the account the passkey named.
 */
export function PasskeyButton(props: {
  label: string;
  /** For a sign-in: the server address typed (required); none for an unlock. */
  server?: () => string;
  disabled?: boolean;
  onDone(done: PasskeySignInDone): void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const run = async () => {
    const server = props.server?.();
    if (props.server && !server) {
      setError("Type the server address first: the passkey is for that server.");
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      props.onDone(await throughCeremonies<PasskeySignInDone>({ kind: "account-passkey-sign-in", ...(server && { server }) }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <p>
        <button type="button" class="secondary" disabled={busy || props.disabled} onClick={() => void run()}>
          {busy ? "Waiting for your passkey…" : props.label}
        </button>
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

/** After a passkey without the PRF signed in: the master password of that account unlocks; a wrong one is said and tried again. */
export function PasskeyPassword({ email, done, cancel }: { email: string; done: () => void; cancel: () => void }) {
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // The sign-in waiting for this password lives in the service worker's memory.
  useEffect(keepWorkerAwake, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await ask({ kind: "account-passkey-password", password });
      done();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit}>
      <h1>Unlock your vault</h1>
      <p>Your passkey signed you in as {email}. Enter your master password to unlock.</p>
      <p class="meta">
        This passkey signs in and cannot unlock: its authenticator does not offer the PRF extension, which unlocking takes.
      </p>
      <div class="field">
        <label for="passkey-password">Master password</label>
        <input
          id="passkey-password"
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
        <button type="button" class="secondary" onClick={() => void ask({ kind: "account-passkey-cancel" }).finally(cancel)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface Listed {
  passkeys: AccountPasskeyView[];
  policy: "allowed" | "forbidden" | "required";
}

/** Unlocked: the account's passkeys for signing in, Remove on each, and a form to add one. */
export function AccountPasskeys({ back }: { back: () => void }) {
  const k = usePasskeys();
  return (
    <section aria-labelledby="account-passkeys">
      <div class="spread">
        <h1 id="account-passkeys">Passkeys for signing in</h1>
        <button type="button" class="secondary" onClick={back}>
          Back
        </button>
      </div>
      <p class="meta">
        A passkey signs you in to this extension and the web vault without your master password. When its authenticator offers the PRF
        extension, it unlocks your vault too; otherwise your master password unlocks.
      </p>
      {k.list?.policy === "forbidden" && (
        <p class="warning" role="status">
          Your organization does not allow signing in with a passkey: none can be added.
        </p>
      )}
      {k.said && (
        <p class={k.said.error ? "error" : "meta"} role={k.said.error ? "alert" : "status"}>
          {k.said.text}
        </p>
      )}
      {k.list === undefined ? <p class="meta">Loading…</p> : <PasskeyList passkeys={k.list.passkeys} busy={k.busy} remove={k.remove} />}
      {k.list && k.list.policy !== "forbidden" && <AddForm k={k} />}
    </section>
  );
}

/** The account's passkeys and policy, what was last said, and the actions on them (each reads the list again). */
function usePasskeys() {
  const [list, setList] = useState<Listed | undefined>();
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [said, setSaid] = useState<{ text: string; error?: boolean } | undefined>();
  const [busy, setBusy] = useState(false);
  const reload = () => ask<Listed>({ kind: "account-passkeys" }).then(setList);
  const act = async (what: () => Promise<string | undefined>) => {
    setBusy(true);
    setSaid(undefined);
    try {
      const text = await what();
      if (text) setSaid({ text });
    } catch (err) {
      setSaid({ text: (err as Error).message, error: true });
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void act(async () => (await reload(), undefined)), []);
  const add = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { passkey } = await throughCeremonies<{ passkey: AccountPasskeyView }>({
        kind: "account-passkey-add",
        name: name.trim(),
        password,
      });
      // The password is not kept: an unattended popup must not register someone else's passkey.
      setPassword("");
      setName("");
      await reload();
      return passkey.unlock
        ? `“${passkey.name}” added: it signs you in and unlocks your vault.`
        : `“${passkey.name}” added: it signs you in, and your master password unlocks (its authenticator does not offer the PRF extension).`;
    });
  };
  const remove = (p: AccountPasskeyView) => {
    if (!confirm(`Remove the passkey “${p.name}”? It will no longer ${p.unlock ? "sign you in or unlock your vault" : "sign you in"}.`))
      return;
    void act(async () => {
      await ask({ kind: "account-passkey-remove", credentialId: p.credentialId });
      await reload();
      return `“${p.name}” removed.`;
    });
  };
  return { list, name, setName, password, setPassword, said, busy, add, remove };
}

function PasskeyList(props: { passkeys: AccountPasskeyView[]; busy: boolean; remove: (p: AccountPasskeyView) => void }) {
  return (
    <ul class="items" aria-label="Passkeys">
      {props.passkeys.map((p) => (
        <li key={p.credentialId}>
          <strong>{p.name}</strong>
          <span class="meta"> {p.unlock ? "Unlocks your vault" : "Signs in; your master password unlocks"}</span>
          <div class="actions">
            <button
              type="button"
              class="secondary"
              disabled={props.busy}
              aria-label={`Remove passkey ${p.name}`}
              onClick={() => props.remove(p)}
            >
              Remove
            </button>
          </div>
        </li>
      ))}
      {props.passkeys.length === 0 && <li class="meta">None yet.</li>}
    </ul>
  );
}

/** Adding one: its name and the master password; then the browser's prompt (a second touch when the PRF is answered only at sign-in). */
function AddForm({ k }: { k: ReturnType<typeof usePasskeys> }) {
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  return (
    <form onSubmit={k.add} aria-label="Add a passkey">
      <div class="field">
        <label for="passkey-name">Name for the passkey</label>
        <input id="passkey-name" required maxLength={64} value={k.name} onInput={value(k.setName)} />
      </div>
      <div class="field">
        <label for="passkey-add-password">Master password (to add a passkey)</label>
        <input
          id="passkey-add-password"
          type="password"
          autocomplete="current-password"
          required
          value={k.password}
          onInput={value(k.setPassword)}
        />
      </div>
      <button type="submit" disabled={k.busy}>
        {k.busy ? "Waiting for your passkey…" : "Add a passkey"}
      </button>
    </form>
  );
}
