/** The account's sessions (logins): where it is signed in, and ending one, or all but this browser's. */
import { useEffect, useState } from "preact/hooks";
import { printable, type SessionInfo } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, ErrorNote, useAction } from "../components/ui";

const when = (iso: string) => new Date(iso).toLocaleString();

export function Sessions() {
  const client = currentClient();
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = useAction();
  const act = useAction();
  const reload = () => load.run(async () => setSessions(await client.sessions.list()));
  useEffect(() => void reload(), []);

  const end = (s: SessionInfo) =>
    void act.run(async () => {
      await client.sessions.end(s.sessionId);
      // Said once the list shows it: the note and the list agree when a screen reader reads them.
      await reload();
      setNote(`Ended the session of ${printable(s.deviceName)}: it is signed out within seconds.`);
    });
  const endOthers = () =>
    void act.run(async () => {
      const ended = await client.sessions.endOthers();
      await reload();
      setNote(ended === 0 ? "There was no other session." : `Ended ${ended} other session${ended === 1 ? "" : "s"}.`);
    });
  const others = sessions?.filter((s) => !s.current) ?? [];

  return (
    <main>
      <h1>Where you are signed in</h1>
      <p>
        Each login is a session. If you do not recognize one, end it, and change your master password if it may be known. Device names are
        what each app said at login; the address is where it was last used from.
      </p>
      {load.busy && !sessions && <Busy label="Loading sessions…" />}
      <ErrorNote error={load.error} />
      <ErrorNote error={act.error} />
      {note && (
        <p class="note" role="status">
          {note}
        </p>
      )}
      {sessions && <SessionTable sessions={sessions} busy={act.busy} onEnd={end} />}
      {others.length > 0 && (
        <button type="button" class="danger" disabled={act.busy} onClick={endOthers}>
          End all other sessions
        </button>
      )}
    </main>
  );
}

function SessionTable({ sessions, busy, onEnd }: { sessions: SessionInfo[]; busy: boolean; onEnd(session: SessionInfo): void }) {
  return (
    <table class="cards">
      <thead>
        <tr>
          <th scope="col">Device</th>
          <th scope="col">Last used</th>
          <th scope="col">From</th>
          <th scope="col">Signed in</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <tr key={s.sessionId}>
            <td data-label="Device">{printable(s.deviceName)}</td>
            <td data-label="Last used">{when(s.lastUsedAt)}</td>
            <td data-label="From">{printable(s.address)}</td>
            <td data-label="Signed in">{when(s.createdAt)}</td>
            <td>
              {s.current ? (
                <strong>This browser</strong>
              ) : (
                <button type="button" class="danger" disabled={busy} onClick={() => onEnd(s)}>
                  End session of {printable(s.deviceName)}
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
