/**
 * The account's sessions (logins): where it is signed in, and ending one, or all but this browser's;
 * and the devices remembered for the second step, each to forget.
 */
import { useEffect, useState } from "preact/hooks";
import { printable, type RememberedDeviceInfo, type SessionInfo } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, ErrorNote, useAction } from "../components/ui";

const when = (iso: string) => new Date(iso).toLocaleString();

export function Sessions() {
  const client = currentClient();
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = useAction();
  const act = useAction();
  const [devices, setDevices] = useState<RememberedDeviceInfo[] | null>(null);
  // This browser's session, as its own access token names it: not whatever the list marks.
  const mine = client.sessions.currentId();
  const reload = () =>
    load.run(async () => {
      setSessions(await client.sessions.list());
      setDevices(await client.sessions.rememberedDevices());
    });
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
  const forget = (d: RememberedDeviceInfo) =>
    void act.run(async () => {
      await client.sessions.forgetDevice(d.deviceId);
      await reload();
      setNote(`Forgot ${printable(d.deviceName)}: its next login asks for your second factor.`);
    });
  const others = sessions?.filter((s) => s.sessionId !== mine) ?? [];

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
      {sessions && <SessionTable sessions={sessions} mine={mine} busy={act.busy} onEnd={end} />}
      {others.length > 0 && (
        <button type="button" class="danger" disabled={act.busy} onClick={endOthers}>
          End all other sessions
        </button>
      )}
      {devices && <RememberedDevices devices={devices} busy={act.busy} onForget={forget} />}
    </main>
  );
}

interface TableProps {
  sessions: SessionInfo[];
  mine: string | undefined;
  busy: boolean;
  onEnd(session: SessionInfo): void;
}

function SessionTable({ sessions, mine, busy, onEnd }: TableProps) {
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
              {s.sessionId === mine ? (
                <strong>This device</strong>
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

function RememberedDevices(props: { devices: RememberedDeviceInfo[]; busy: boolean; onForget(device: RememberedDeviceInfo): void }) {
  const { devices, busy, onForget } = props;
  return (
    <section aria-labelledby="remembered-devices">
      <h2 id="remembered-devices">Devices that skip the second step</h2>
      <p>
        A device you chose to remember at the second step logs in with your master password alone until it expires. Changing your master
        password or removing a second factor forgets them all.
      </p>
      {devices.length === 0 ? (
        <p>No device is remembered.</p>
      ) : (
        <table class="cards">
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">Last used</th>
              <th scope="col">Remembered</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {devices.map((d) => (
              <tr key={d.deviceId}>
                <td data-label="Device">{printable(d.deviceName)}</td>
                <td data-label="Last used">{when(d.lastUsedAt)}</td>
                <td data-label="Remembered">{when(d.createdAt)}</td>
                <td data-label="Expires">{when(d.expiresAt)}</td>
                <td>
                  <button type="button" class="danger" disabled={busy} onClick={() => onForget(d)}>
                    Forget {printable(d.deviceName)}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
