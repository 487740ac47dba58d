/**
 * Changing the master password. The page asks whether the old one may be known: if so, the change
 * also rotates the account's keys and gives the vaults the user may rekey fresh keys (protect.ts),
 * and says which shared vaults it could not; if not, it says what a plain change leaves open.
 */
import { useState } from "preact/hooks";
import { ProtectionInterruptedError, type ProtectionResult, type VaultClient } from "../../../sdk";
import { InputError } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, ErrorNote, nextPaint, PasswordField, Submit, useAction } from "../components/ui";

export function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [known, setKnown] = useState<"yes" | "no" | "">("");
  const { action, done, left, step, unfinished, change, finish } = useChange();

  const submit = (e: Event) => {
    e.preventDefault();
    change(
      async () => {
        if (next !== again) throw new InputError("The two new passwords are not the same: type the new master password twice.");
        if (known === "") throw new InputError("Say whether anyone else could know your old master password.");
        return { current, next, oldPasswordMayBeKnown: known === "yes" };
      },
      () => {
        setCurrent("");
        setNext("");
        setAgain("");
      },
    );
  };

  return (
    <main>
      <h1>Change your master password</h1>
      <Intro />
      <form onSubmit={submit}>
        <PasswordFields current={current} next={next} again={again} set={{ setCurrent, setNext, setAgain }} />
        <OldPasswordQuestion known={known} setKnown={setKnown} />
        <Submit busy={action.busy}>Change master password</Submit>
      </form>
      {unfinished && (
        <button type="button" onClick={finish} disabled={action.busy}>
          Finish protecting my account
        </button>
      )}
      {action.busy && <Busy label={step || "Deriving both keys and wrapping your vault keys again: this takes a moment…"} />}
      <ErrorNote error={action.error} />
      {done && (
        <p class="note" role="status">
          {done}
        </p>
      )}
      <LeftVaults left={left} />
    </main>
  );
}

/** The change and its outcome: what it did, the vaults it left, its progress, and whether the protection is to be finished. */
function useChange() {
  const client = currentClient();
  const [done, setDone] = useState<string | null>(null);
  const [left, setLeft] = useState<ProtectionResult["left"]>([]);
  const [step, setStep] = useState<string>("");
  const [unfinished, setUnfinished] = useState(false);
  const action = useAction();

  const change = (read: () => Promise<{ current: string; next: string; oldPasswordMayBeKnown: boolean }>, clear: () => void) => {
    setDone(null);
    setLeft([]);
    void action.run(async () => {
      const { current, next, oldPasswordMayBeKnown } = await read();
      await nextPaint();
      try {
        const result = await client.changePassword(current, next, { oldPasswordMayBeKnown, onProgress: (p) => setStep(stepWords(p)) });
        clear();
        setDone(changedWords(result));
        setLeft(result.protection?.left ?? []);
      } catch (err) {
        if (!(err instanceof ProtectionInterruptedError)) throw err;
        clear();
        setUnfinished(true);
        throw new InputError(
          "Your master password is changed, but cutting the old one off stopped part way: every vault opens with the new password. Press “Finish protecting my account” to go on.",
        );
      }
    });
  };

  const finish = () => {
    setDone(null);
    void action.run(async () => {
      const result = await client.protect({ onProgress: (p) => setStep(stepWords(p)) });
      setUnfinished(false);
      setDone(protectedWords(result));
      setLeft(result.left);
    });
  };
  return { action, done, left, step, unfinished, change, finish };
}

function Intro() {
  return (
    <>
      <p>
        Your master password never leaves this browser. Changing it wraps your keys and every personal vault&apos;s key again, here, in one
        step: if anything fails, the old password keeps working. Your other sessions end.
      </p>
      <p>
        A change alone keeps your keys: anyone who knows the old password and kept a copy of the server&apos;s data from before the change
        (a backup, a dishonest operator) can still open everything, including what you write after it. If the old password may be known, the
        change also replaces your keys and gives your vaults new keys, so that it opens nothing you write from now on; shared vaults that
        others manage keep their key until one of their owners rekeys them.
      </p>
    </>
  );
}

function PasswordFields(props: {
  current: string;
  next: string;
  again: string;
  set: { setCurrent(v: string): void; setNext(v: string): void; setAgain(v: string): void };
}) {
  const { current, next, again } = props;
  const { setCurrent, setNext, setAgain } = props.set;
  return (
    <>
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
    </>
  );
}

/** The question that decides between a plain change and one that cuts the old password off: no answer is taken for granted. */
function OldPasswordQuestion({ known, setKnown }: { known: string; setKnown(v: "yes" | "no"): void }) {
  return (
    <fieldset>
      <legend>Could anyone else know your old master password (it leaked, was shared, or was typed somewhere you do not trust)?</legend>
      <label>
        <input type="radio" name="pw-known" value="yes" checked={known === "yes"} onChange={() => setKnown("yes")} required />
        Yes, or I am not sure: also replace my keys and my vaults&apos; keys
      </label>
      <label>
        <input type="radio" name="pw-known" value="no" checked={known === "no"} onChange={() => setKnown("no")} required />
        No, nobody else can know it: change the password only
      </label>
    </fieldset>
  );
}

/** The shared vaults a protective change could not rekey, each with what to do. */
function LeftVaults({ left }: { left: ProtectionResult["left"] }) {
  if (left.length === 0) return null;
  return (
    <section aria-label="Vaults still open to the old password">
      <p>
        These shared vaults keep their key: the old password, with a copy of the server&apos;s data from before, still opens what is written
        there until they are rekeyed.
      </p>
      <ul>
        {left.map((v) => (
          <li key={v.vaultId}>
            {v.vaultName}: {v.detail}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** What a password change did, in words. */
function changedWords(result: Awaited<ReturnType<VaultClient["changePassword"]>>): string {
  return (
    `Your master password is changed. ${result.vaults} personal vault${result.vaults === 1 ? "" : "s"} wrapped again; ` +
    `${result.sessionsEnded} other session${result.sessionsEnded === 1 ? "" : "s"} ended: sign in there with the new password.` +
    (result.recovery === "renewed" ? " Your account recovery was made again to the same trustees." : "") +
    (result.recovery === "stale" ? " Your account recovery held the old password: enrol again on the Security page." : "") +
    (result.passkeysRemoved
      ? ` ${result.passkeysRemoved} passkey${result.passkeysRemoved === 1 ? "" : "s"} that unlocked your vault ${result.passkeysRemoved === 1 ? "was" : "were"} removed (the old password opened what they kept): add ${result.passkeysRemoved === 1 ? "it" : "them"} again on the Security page.`
      : "") +
    (result.protection
      ? " " + protectedWords(result.protection)
      : " Your keys are the same as before: the old password, with a copy of the server's data from before, still opens them.")
  );
}

/** What cutting the old password off did, in words. */
function protectedWords(p: ProtectionResult): string {
  const n = p.rekeyed.length;
  return (
    `Your keys are replaced (your fingerprint is now ${p.fingerprint}) and ${n} vault${n === 1 ? "" : "s"} have new keys` +
    (p.left.length === 0
      ? ": the old password opens nothing you write from now on."
      : `; ${p.left.length} shared vault${p.left.length === 1 ? "" : "s"} others manage keep their key (below).`)
  );
}

function stepWords(p: { phase: "rotate" | "rekey"; vault?: { vaultName: string }; done: number; total: number }): string {
  return p.phase === "rotate"
    ? "Replacing your keys…"
    : p.vault
      ? `Giving “${p.vault.vaultName}” a new key (${p.done + 1} of ${p.total})…`
      : "Finishing…";
}
