/**
 * "Emergency access": what this account granted (you-grant.tsx: grant a colleague whose key you
 * checked, see their requests, refuse, revoke, make a stale grant again) and what was granted to
 * it (granted-to-you.tsx: ask, wait, open once the grantor's key is checked here, decline). Both
 * need the colleagues' keys as this device holds them: read once here. A grant opened shows here in place of the
 * lists (opened.tsx), in a client of its own that lives only as long as this page.
 */
import { useEffect, useState } from "preact/hooks";
import { currentClient } from "../../session";
import { readGrants, useGrants } from "../../emergency-grants";
import { Busy, ErrorNote, useAction } from "../../components/ui";
import { YouGrant } from "./you-grant";
import { GrantedToYou } from "./granted-to-you";
import { OpenedAccess, type Opened } from "./opened";
import { useColleagues } from "./colleagues";

export function EmergencyPage() {
  const client = currentClient();
  const { grants } = useGrants(client);
  const colleagues = useColleagues(client);
  const load = useAction();
  const [opened, setOpened] = useState<Opened | null>(null);
  const reload = () => load.run(async () => void (await readGrants(client)));
  useEffect(() => void reload(), [client]);
  return (
    <main>
      <h1>Emergency access</h1>
      {opened ? (
        <OpenedAccess
          opened={opened}
          onClose={() => {
            setOpened(null);
            void reload();
          }}
        />
      ) : (
        <>
          <p>
            Let a colleague into your account if something happens to you: they ask, and after the wait you chose it opens for them, unless
            you refuse first. Every device you are signed in on tells you when someone asks.
          </p>
          {load.busy && !grants && <Busy label="Reading your emergency access grants…" />}
          <ErrorNote error={load.error ?? colleagues.error} />
          <YouGrant client={client} granted={grants?.granted ?? null} colleagues={colleagues} />
          <GrantedToYou client={client} received={grants?.received ?? null} colleagues={colleagues} onOpened={setOpened} />
        </>
      )}
    </main>
  );
}
