/**
 * The account's own keys: the fingerprint others compare, the key log (every key the account had,
 * each step signed by the key before it), and rotating the keys: a signed step in the log, every
 * vault's key wrapped to the new keys here, the other sessions ended. People who pinned the old
 * keys follow the signed log to the new ones without a warning.
 */
import { useEffect, useState } from "preact/hooks";
import type { VaultClient } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, ErrorNote, nextPaint, Submit, useAction } from "../components/ui";
import { ColleaguesKeys } from "./colleagues";

type LogEntry = { version: number; fingerprint: string; at?: string };

/** What a rotation did, in words: the new key version, the vaults and sessions, the recovery enrolment bound to the old keys. */
function rotatedText(result: Awaited<ReturnType<VaultClient["keys"]["rotate"]>>): string {
  const recovery = {
    renewed: " Your account recovery was made again to the same trustees.",
    stale: " Your account recovery was bound to the old keys and could not be made again here: enrol again with trustees you verified.",
    none: "",
  }[result.recovery];
  return (
    `Your keys are rotated (key version ${result.keyVersion}). ${plural(result.vaults, "vault")} wrapped to the new keys; ` +
    `${plural(result.sessionsEnded, "other session")} ended: sign in there again.${recovery}`
  );
}

export function OwnKey() {
  const client = currentClient();
  const [fingerprint, setFingerprint] = useState<string | null>(null);
  const [log, setLog] = useState<LogEntry[] | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const load = () => {
    void client.keys.own().then(setFingerprint);
    void client.keys.log(client.account.userId).then(setLog, () => setLog(null));
  };
  useEffect(load, []);

  const rotate = (e: Event) => {
    e.preventDefault();
    setDone(null);
    void action.run(async () => {
      await nextPaint();
      const result = await client.keys.rotate();
      setDone(rotatedText(result));
      load();
    });
  };

  return (
    <main>
      <h1>Your key</h1>
      <p>
        Signed in as <strong>{client.account.email}</strong> (user <code>{client.account.userId}</code>).
      </p>
      <p>Your key fingerprint:</p>
      <p>
        <code data-testid="own-fingerprint">{fingerprint ?? "…"}</code>
      </p>
      <p>
        When someone shares a vault with you for the first time, their browser shows them this fingerprint for you. Read it to them by phone
        or in person: if theirs says the same, the server did not slip another key in between.
      </p>
      <ColleaguesKeys client={client} />
      <h2>Rotate your keys</h2>
      <p>
        Replace your keys: your old keys sign the new ones into your key log, every vault&apos;s key is wrapped to the new keys in this
        browser, in one step, and your other sessions end. People who pinned your old keys follow your signed log to the new ones without a
        warning. If your old keys were exposed (a lost laptop, a leaked backup), rotating is not enough on its own: the vault keys you held
        until now still open with them, so rekey the vaults you manage, and ask the owners of the others to rekey theirs.
      </p>
      <form onSubmit={rotate}>
        <Submit busy={action.busy}>Rotate my keys</Submit>
      </form>
      {action.busy && <Busy label="Making new keys and wrapping every vault key to them: this takes a moment…" />}
      <ErrorNote error={action.error} />
      {done && (
        <p class="note" role="status">
          {done}
        </p>
      )}
      {log && <KeyLog log={log} />}
    </main>
  );
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** Every key the account had, each signed by the one before it. */
function KeyLog({ log }: { log: LogEntry[] }) {
  return (
    <>
      <h2>Your key log</h2>
      <table>
        <thead>
          <tr>
            <th>Version</th>
            <th>Fingerprint</th>
            <th>Since</th>
          </tr>
        </thead>
        <tbody>
          {log.map((e) => (
            <tr key={e.version}>
              <td>{e.version}</td>
              <td>
                <code>{e.fingerprint}</code>
              </td>
              <td>{e.at ?? "registration"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
