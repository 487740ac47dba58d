/** Unlocking after a lock: the master password opens the keys again; the login itself stayed. */
import { useState } from "preact/hooks";
import { currentClient, logout, unlocked } from "../session";
import { Busy, ErrorNote, Field, inputValue, nextPaint, useAction, Submit } from "../components/ui";
import { KDF_NOTE } from "../components/kdf-note";

export function Unlock() {
  const [password, setPassword] = useState("");
  const action = useAction();
  const client = currentClient();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await nextPaint();
      await client.unlock(password);
      unlocked();
    });
  };
  return (
    <main>
      <h1>Your vault is locked</h1>
      <p>Signed in as {client.account.email}. Enter your master password to open your vaults again.</p>
      <form onSubmit={submit}>
        <Field id="unlock-password" label="Master password">
          <input
            id="unlock-password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(inputValue(e))}
          />
        </Field>
        <Submit busy={action.busy}>Unlock</Submit>
        <button type="button" class="secondary" onClick={() => void logout()}>
          Log out
        </button>
      </form>
      {action.busy && <Busy label={KDF_NOTE} />}
      <ErrorNote error={action.error} />
    </main>
  );
}
