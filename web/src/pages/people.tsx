/**
 * The organization's people (owners and admins): who is in it, each one's key fingerprint and
 * whether this device checked it (KeyCheck, as on "Your key"), and taking someone out. The
 * removal ends their sessions and every vault refuses them at once; then each shared vault they
 * were in that this user manages gets their signed `remove` link and a new key, with progress, and
 * the others are named for their owners.
 */
import { useEffect, useState } from "preact/hooks";
import { mayRemoveFromOrg, printable, type RekeyProgress, type RemovalFinished, type SignedMember } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, ErrorNote, useAction } from "../components/ui";
import { KeyCheck } from "../components/key-check";
import { PHASES } from "../components/rekey-phases";

/** Someone taken out of the organization: what ended, and which vaults were rekeyed or are left to their owners. */
interface Removal {
  email: string;
  finished: RemovalFinished;
  sessionsEnded: number;
}

export function People() {
  const client = currentClient();
  const [people, setPeople] = useState<SignedMember[] | null>(null);
  const [progress, setProgress] = useState<{ vault: number; of: number; step: RekeyProgress } | null>(null);
  const [result, setResult] = useState<Removal | null>(null);
  const load = useAction();
  const act = useAction();
  const reload = () => load.run(async () => setPeople(await client.people.list()));
  useEffect(() => void reload(), []);

  const remove = (person: SignedMember) =>
    void act.run(async () => {
      if (!confirm(`Take ${person.email} out of the organization? Their sessions end and every vault refuses them at once.`)) return;
      setResult(null);
      const removal = await client.people.remove(person.userId);
      try {
        const finished = await client.people.finishRemoval(removal, {
          onProgress: (_id, vault, of, step) => setProgress({ vault, of, step }),
        });
        setResult({ email: person.email, finished, sessionsEnded: removal.sessionsEnded });
      } finally {
        setProgress(null);
        await reload();
      }
    });

  const current = people?.filter((p) => !p.removedAt) ?? [];
  const removed = people?.filter((p) => p.removedAt) ?? [];
  return (
    <main>
      <h1>People</h1>
      {load.busy && !people && <Busy label="Loading the organization's people…" />}
      <ErrorNote error={load.error} />
      <ErrorNote error={act.error} />
      {progress && (
        <p role="status">
          Vault {progress.vault + 1} of {progress.of}: {PHASES[progress.step.phase]}: {progress.step.done} of {progress.step.total}
        </p>
      )}
      {result && <RemovalResult result={result} />}
      {people && <PeopleTable people={current} busy={act.busy} onRemove={remove} onChecked={() => void reload()} />}
      {removed.length > 0 && (
        <>
          <h2>Removed</h2>
          <ul>
            {removed.map((p) => (
              <li key={p.userId}>
                {printable(p.email)}, since {new Date(p.removedAt!).toLocaleString()}
              </li>
            ))}
          </ul>
        </>
      )}
    </main>
  );
}

function RemovalResult({ result }: { result: Removal }) {
  const { finished } = result;
  return (
    <div class="note" role="status">
      <p>
        {printable(result.email)} is out of the organization; {result.sessionsEnded} session{result.sessionsEnded === 1 ? "" : "s"} ended.{" "}
        {finished.rekeyed.length} vault{finished.rekeyed.length === 1 ? "" : "s"} rekeyed.
      </p>
      {finished.left.length > 0 && (
        <p>
          {finished.left.length} vault{finished.left.length === 1 ? " is" : "s are"} left to {finished.left.length === 1 ? "its" : "their"}{" "}
          owners to rekey: {finished.left.map((l) => l.vaultId).join(", ")}.
        </p>
      )}
    </div>
  );
}

/** The organization's people now, each with their key as this device holds it and a way to take them out when this user's role allows it. */
function PeopleTable(props: { people: SignedMember[]; busy: boolean; onRemove(person: SignedMember): void; onChecked(): void }) {
  const { people, busy, onRemove } = props;
  const client = currentClient();
  const account = client.account;
  // This user's own role as the organization's signed log gives it (the server's word only while there is no log).
  const me = people.find((p) => p.userId === account.userId) ?? account;
  const emailOf = (userId?: string) => printable(people.find((p) => p.userId === userId)?.email ?? userId ?? "");
  return (
    <table class="cards">
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Role</th>
          <th scope="col">Signed by</th>
          <th scope="col">Key</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {people.map((p) => (
          <tr key={p.userId}>
            <td>{printable(p.email)}</td>
            <td data-label="Role">{p.role}</td>
            <td data-label="Signed by">
              {p.orgLog === "signed"
                ? emailOf(p.signedBy)
                : p.orgLog === "unsigned"
                  ? "not in the organization's signed log: no role taken from the server"
                  : "no signed log yet"}
            </td>
            <td data-label="Key">
              {p.userId === me.userId ? (
                <a href="#/key">Your own key</a>
              ) : (
                <KeyCheck client={client} person={p} onChecked={props.onChecked} />
              )}
            </td>
            <td>
              {p.userId !== me.userId && mayRemoveFromOrg(me.role, p.role, false) && (
                <button type="button" class="danger" disabled={busy} onClick={() => onRemove(p)}>
                  Remove {printable(p.email)} from the organization
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
