/**
 * Recovering an account whose master password is forgotten: this browser makes a
 * one-time key and shows a code; the user reads it to each trustee over a call; once enough of them
 * approved, this browser rebuilds the account's keys, sets a new master password, and makes new
 * keys. The one-time key stays in this page's memory only: a reload starts over.
 */
import { useState } from "preact/hooks";
import type { PendingRecovery } from "../../../sdk";
import { InputError } from "../../../sdk";
import { newClient, rememberEmail, signedIn } from "../session";
import { Busy, ErrorNote, Field, inputValue, nextPaint, PasswordField, Submit, useAction, type Action } from "../components/ui";

export function Recover() {
  const [pending, setPending] = useState<PendingRecovery | null>(null);
  const act = useAction();
  return (
    <main>
      <h1>Recover your account</h1>
      {!pending ? <AskTrustees act={act} onStarted={setPending} /> : <Approvals pending={pending} act={act} />}
      {act.busy && pending && <Busy label="Working…" />}
      <ErrorNote error={act.error} />
      <p>
        <a href="#/login">Back to the login page</a>
      </p>
    </main>
  );
}

/** The first step: the account's email; this browser makes the one-time key and asks the trustees. */
function AskTrustees({ act, onStarted }: { act: Action; onStarted(pending: PendingRecovery): void }) {
  const [email, setEmail] = useState("");
  const start = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const p = await newClient().recovery.start(email);
      onStarted(p);
    });
  };
  return (
    <form onSubmit={start}>
      <p>
        If you enrolled in account recovery, the trustees you chose can let you back in. This browser makes a one-time key; you read a code
        to each of them.
      </p>
      <Field id="recover-email" label="Your email">
        <input id="recover-email" type="email" required value={email} onInput={(e) => setEmail(inputValue(e))} />
      </Field>
      <Submit busy={act.busy}>Ask my trustees</Submit>
    </form>
  );
}

/** The code read to each trustee, their approvals counted, and once there are enough, the new password. */
function Approvals({ pending, act }: { pending: PendingRecovery; act: Action }) {
  const [progress, setProgress] = useState<{ approvals: number; threshold: number } | null>(null);
  const check = () => void act.run(async () => setProgress(await newClient().recovery.progress(pending)));
  return (
    <>
      <p>
        Call each of your trustees and read them this code. Nobody else needs it, and no one should ask you for it by message. Keep this
        page open until you are done: reloading it starts over.
      </p>
      <p class="code" data-testid="recover-code">
        <strong>{pending.code}</strong>
      </p>
      <p>
        <button type="button" onClick={check}>
          Check approvals
        </button>
      </p>
      {progress && (
        <p data-testid="recover-progress" role="status">
          {/* Until a trustee approves, the server shows every request alike (k reads 2), so that strangers learn nothing. */}
          {progress.approvals === 0
            ? `No approvals yet (at least ${progress.threshold} needed).`
            : `${progress.approvals} of ${progress.threshold} approvals.`}
        </p>
      )}
      {progress && progress.approvals >= progress.threshold && <NewPassword pending={pending} act={act} />}
    </>
  );
}

/** The last step: the code a trustee read back, and the new master password; this browser rebuilds the keys. */
function NewPassword({ pending, act }: { pending: PendingRecovery; act: Action }) {
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [confirmation, setConfirmation] = useState("");
  const finish = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      if (password !== again) throw new InputError("The two passwords are not the same: type the new master password twice.");
      await nextPaint();
      const client = newClient();
      await client.recovery.finish(pending, password, confirmation);
      rememberEmail(client.account.email);
      // Signed in, the shell takes this route to the Security page: this recovery used the enrolment up, enrol again.
      await signedIn(client);
    });
  };
  return (
    <form onSubmit={finish}>
      <Field
        id="recover-confirm"
        label="The code a trustee read back to you"
        hint="It shows that the keys opened here are the ones your colleagues know."
      >
        <input id="recover-confirm" required value={confirmation} onInput={(e) => setConfirmation(inputValue(e))} />
      </Field>
      <PasswordField
        id="recover-new"
        label="New master password"
        autocomplete="new-password"
        required
        value={password}
        onInput={setPassword}
      />
      <PasswordField
        id="recover-again"
        label="New master password, again"
        autocomplete="new-password"
        required
        value={again}
        onInput={setAgain}
      />
      <Submit busy={act.busy}>Recover my account</Submit>
    </form>
  );
}
