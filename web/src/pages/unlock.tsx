/**
 * The lock screen: after a lock, the master password opens the keys again (the login itself
 * stayed); after a reload, it opens the login this browser kept (session.ts) and the same session
 * goes on, without a second step. A passkey with the PRF opens it too, by signing in anew.
 */
import { useState } from "preact/hooks";
import { currentClient, forgetKept, logout, newClient, rememberEmail, replaceLocked, resumeKept, unlocked, useSession } from "../session";
import { Busy, ErrorNote, Field, inputValue, nextPaint, useAction, Submit } from "../components/ui";
import { KDF_NOTE } from "../components/kdf-note";
import { InputError, printable } from "../../../sdk";
import { passkeySignIn } from "./passkey-sign-in";
import { leaveWaitingEdits } from "../offline-edits";

export function Unlock() {
  const [password, setPassword] = useState("");
  const action = useAction();
  const session = useSession();
  const kept = session.client ? null : session.kept;
  const { email, userId } = kept ? kept.account : currentClient().account;
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await nextPaint();
      if (kept) return resumeKept(password);
      await currentClient().unlock(password);
      unlocked();
    });
  };
  return (
    <main>
      <h1>Your vault is locked</h1>
      <p>Signed in as {printable(email)}. Enter your master password to open your vaults again.</p>
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
        <WaysOut kept={kept !== null} userId={userId} />
      </form>
      {kept && (
        <p class="note">
          Logging out here erases this browser&apos;s locked login. Without your master password it cannot end the session on the server:
          that session is of no use without the password, and you can end it from the Sessions page on another device.
        </p>
      )}
      {action.busy && <Busy label={KDF_NOTE} />}
      <ErrorNote error={action.error} />
      <PasskeyUnlock userId={userId} email={email} disabled={action.busy} />
    </main>
  );
}

/**
 * A passkey of this account with the PRF opens the vault in place of the password: it signs in
 * anew and its login takes the locked one's place (session.ts `replaceLocked`). One without the
 * PRF, or another account's, opens nothing here and is said so.
 */
function PasskeyUnlock({ userId, email, disabled }: { userId: string; email: string; disabled: boolean }) {
  const action = useAction();
  const run = () =>
    void action.run(async () => {
      const client = newClient();
      const result = await passkeySignIn(client);
      if (!result.unlocked) {
        await client.cancelPasskeyLogin();
        throw new InputError("This passkey signs in, but its authenticator cannot unlock your vault: enter your master password.");
      }
      if (result.account.userId !== userId) {
        await client.logout().catch(() => undefined);
        throw new InputError(
          `This passkey is for ${printable(result.account.email)}, not ${printable(email)}: use one of this account's passkeys, or your master password.`,
        );
      }
      await replaceLocked(client);
    });
  return (
    <div>
      <p>
        <button type="button" class="secondary" onClick={run} disabled={disabled || action.busy}>
          Unlock with a passkey
        </button>
      </p>
      {action.busy && <Busy label="Waiting for your passkey…" />}
      <ErrorNote error={action.error} />
    </div>
  );
}

/** Leaving without unlocking: Log out, and for a kept login, another account. Edits made offline that wait here would be lost: asked first. */
function WaysOut({ kept, userId }: { kept: boolean; userId: string }) {
  const leave = (then: () => void) => void leaveWaitingEdits(userId).then((ok) => ok && then());
  return (
    <>
      <button type="button" class="secondary" onClick={() => leave(() => void (kept ? forgetKept() : logout()))}>
        Log out
      </button>
      {kept && (
        <button
          type="button"
          class="secondary"
          onClick={() =>
            leave(() => {
              rememberEmail("");
              forgetKept();
            })
          }
        >
          Use another account
        </button>
      )}
    </>
  );
}
