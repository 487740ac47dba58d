/** Changing the master password: every personal vault's key is wrapped again, and the account's other sessions end. */
import { useState } from "preact/hooks";
import type { VaultClient } from "../../../sdk";
import { InputError } from "../errors";
import { currentClient } from "../session";
import { Busy, ErrorNote, nextPaint, PasswordField, Submit, useAction } from "../components/ui";

export function ChangePassword() {
  const client = currentClient();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    void action.run(async () => {
      if (next !== again) throw new InputError("The two new passwords are not the same: type the new master password twice.");
      await nextPaint();
      const result = await client.changePassword(current, next);
      setCurrent("");
      setNext("");
      setAgain("");
      setDone(changedWords(result));
    });
  };

  return (
    <main>
      <h1>Change your master password</h1>
      <p>
        Your master password never leaves this browser. Changing it wraps your keys and every personal vault&apos;s key again, here, in one
        step: if anything fails, the old password keeps working. Your other sessions end.
      </p>
      <form onSubmit={submit}>
        <PasswordField
          id="pw-current"
          label="Current master password"
          autocomplete="current-password"
          required
          value={current}
          onInput={setCurrent}
        />
        <PasswordField id="pw-new" label="New master password" autocomplete="new-password" required value={next} onInput={setNext} />
        <PasswordField
          id="pw-again"
          label="New master password, again"
          autocomplete="new-password"
          required
          value={again}
          onInput={setAgain}
        />
        <Submit busy={action.busy}>Change master password</Submit>
      </form>
      {action.busy && <Busy label="Deriving both keys and wrapping your vault keys again: this takes a moment…" />}
      <ErrorNote error={action.error} />
      {done && (
        <p class="note" role="status">
          {done}
        </p>
      )}
    </main>
  );
}

/** What a password change did, in words. */
function changedWords(result: Awaited<ReturnType<VaultClient["changePassword"]>>): string {
  return (
    `Your master password is changed. ${result.vaults} personal vault${result.vaults === 1 ? "" : "s"} wrapped again; ` +
    `${result.sessionsEnded} other session${result.sessionsEnded === 1 ? "" : "s"} ended: sign in there with the new password.` +
    (result.recovery === "renewed" ? " Your account recovery was made again to the same trustees." : "") +
    (result.recovery === "stale" ? " Your account recovery held the old password: enrol again on the Security page." : "")
  );
}
