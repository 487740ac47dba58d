/**
 * On "Your key": the keys of everyone else in the organization, as this browser holds them. A key
 * compared in person (or vouched for by an invite link this browser made) is checked; any other is
 * the server's word until compared here, with the same rule as `vaultctl trust` (KeyCheck, as People
 * shows it too). What needs a checked key (sharing, recovery trustees) names this page.
 */
import { useEffect, useState } from "preact/hooks";
import type { CheckedMember, VaultClient } from "../../../sdk";
import { KeyCheck } from "../components/key-check";
import { Busy, ErrorNote, useAction } from "../components/ui";

export function ColleaguesKeys({ client }: { client: VaultClient }) {
  const [people, setPeople] = useState<CheckedMember[] | null>(null);
  const load = useAction();
  const me = client.account.userId;
  const reload = () => load.run(async () => setPeople((await client.people.list()).filter((p) => p.userId !== me && !p.removedAt)));
  useEffect(() => void reload(), []);
  return (
    <section aria-labelledby="colleagues-heading">
      <h2 id="colleagues-heading">Your colleagues&apos; keys</h2>
      <p>
        Compare a colleague&apos;s fingerprint with them once, in person or by phone: they read it from their own Your key page, you type it
        here. A checked key is what sharing a vault with them, and choosing them as a recovery trustee, rely on.
      </p>
      {load.busy && !people && <Busy label="Reading the organization…" />}
      <ErrorNote error={load.error} />
      {people?.length === 0 && <p>Nobody else is in your organization yet.</p>}
      <ul class="list" aria-label="Colleagues' keys">
        {(people ?? []).map((p) => (
          <li key={p.userId} class="colleague">
            <div>
              <strong>{p.email}</strong> <span class="meta">{p.role}</span>
              <KeyCheck client={client} person={p} onChecked={() => void reload()} />
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
