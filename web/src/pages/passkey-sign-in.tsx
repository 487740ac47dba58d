/**
 * Signing in with a passkey, on the login page: no email is asked (the passkey names the account).
 * With the PRF extension the vault opens at once; without it, the passkey signs in and the master
 * password of the account it named unlocks (a wrong one is said, and can be tried again). A
 * sign-in the SDK refuses (a server answering for another passkey or account, or withholding what
 * the passkey unlocks with) is said as a sentence and leaves the person signed out: it never turns
 * into a password prompt.
 */
import { useState } from "preact/hooks";
import { ApiError, InputError, printable, type VaultClient } from "../../../sdk";
import { newClient } from "../session";
import { browserPasskeys } from "../passkey-authenticator";
import { Busy, ErrorNote, Field, inputValue, nextPaint, Submit, useAction } from "../components/ui";
import { KDF_NOTE } from "../components/kdf-note";

/** A passkey sign-in waiting for the master password: the client it signed in, and the account's email. */
export interface PasskeyWaiting {
  client: VaultClient;
  email: string;
}

interface Props {
  /** Continues as a password login continues: the landing page, the login kept (sealed under the key just opened). */
  onSignedIn(client: VaultClient): Promise<void>;
}

/**
 * The button: the browser asks for a passkey of this site; unlocked, the vault opens, else
 * `onWaiting` asks the password. At an address where passkeys cannot work, pressing it says where they do.
 */
export function PasskeyButton({
  onSignedIn,
  onWaiting,
  disabled,
}: Props & { onWaiting(waiting: PasskeyWaiting): void; disabled: boolean }) {
  const action = useAction();
  const signIn = () =>
    void action.run(async () => {
      const client = newClient();
      const result = await passkeySignIn(client);
      if (result.unlocked) await onSignedIn(client);
      else onWaiting({ client, email: result.email });
    });
  return (
    <div>
      <p>
        <button type="button" class="secondary" onClick={signIn} disabled={disabled || action.busy}>
          Sign in with a passkey
        </button>
      </p>
      {action.busy && <Busy label="Waiting for your passkey…" />}
      <ErrorNote error={action.error} />
    </div>
  );
}

/** The browser's passkey signs `client` in; a passkey the server does not know is said as such, not as a wrong email or password. */
export function passkeySignIn(client: VaultClient) {
  return client.loginWithPasskey(browserPasskeys).catch((err: unknown) => {
    if (err instanceof ApiError && err.status === 401) throw new InputError(UNKNOWN_PASSKEY);
    throw err;
  });
}

const UNKNOWN_PASSKEY =
  "This passkey does not sign in to an account here: it was removed (a change of master password made because the old one may be known removes the ones that unlock), or its answer did not check out. Sign in with your email and master password; you can add it again on the Security page.";

/** A passkey without the PRF signed in: the master password of that account unlocks; Cancel goes back to the login form. */
export function PasskeyPassword({ waiting, onSignedIn, onCancel }: Props & { waiting: PasskeyWaiting; onCancel(): void }) {
  const [password, setPassword] = useState("");
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await nextPaint();
      await waiting.client.unlockPasskeyLogin(password);
      await onSignedIn(waiting.client);
    });
  };
  return (
    <section aria-labelledby="passkey-unlock">
      <h2 id="passkey-unlock">Unlock your vault</h2>
      <p>Your passkey signed you in as {printable(waiting.email)}. Enter your master password to unlock.</p>
      <p class="note">
        This passkey signs in, and cannot unlock your vault: its authenticator does not offer the PRF extension, which unlocking takes.
      </p>
      <form onSubmit={submit}>
        <Field id="passkey-password" label="Master password">
          <input
            id="passkey-password"
            type="password"
            autocomplete="current-password"
            autoFocus
            required
            value={password}
            onInput={(e) => setPassword(inputValue(e))}
          />
        </Field>
        <Submit busy={action.busy}>Unlock</Submit>{" "}
        <button
          type="button"
          class="secondary"
          onClick={() => {
            // The session the passkey opened ends on the server, not only here.
            void waiting.client.cancelPasskeyLogin();
            onCancel();
          }}
          disabled={action.busy}
        >
          Cancel
        </button>
      </form>
      {action.busy && <Busy label={KDF_NOTE} />}
      <ErrorNote error={action.error} />
    </section>
  );
}
