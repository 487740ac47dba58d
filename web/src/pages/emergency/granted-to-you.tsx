/**
 * "Granted to you": the grants colleagues made to this account. Ask for access (the wait starts,
 * and the grantor is told), then once the wait is over, Open: the grant is checked and its key
 * opened here, and taken up in a client of its own (memory only, never this browser's stores), as
 * the grantor. Opening needs the grantor's key checked on this device: until it is, their key shows
 * with the comparison that checks it (KeyCheck, as on People and Your key). Decline removes a grant
 * for good.
 */
import { VaultClient } from "../../../../sdk";
import type { EmergencyGrant } from "../../../../sdk/client";
import { useGrantAction } from "../../emergency-grants";
import { deriveInWorker } from "../../kdf";
import { API_URL } from "../../session";
import { ErrorNote } from "../../components/ui";
import { KeyCheck } from "../../components/key-check";
import { keyChecked, type Colleagues } from "./colleagues";
import type { Opened } from "./opened";
import { LEVEL_GIVES, waitWords, when } from "./words";
import { GrantTitle } from "./grant-title";

/** Where a grant made to this account stands, in a sentence. */
function receivedStatus(g: EmergencyGrant): string {
  switch (g.status) {
    case "idle":
      return (
        `You can ask for access: it opens ${waitWords(g.waitHours)} later, unless ${g.email} refuses.` +
        (g.refusedAt ? ` They refused your last request on ${when(g.refusedAt)}.` : "")
      );
    case "waiting":
      return `Waiting until ${when(g.availableAt)}.`;
    case "released":
      return `The wait is over: you can open ${g.email}'s account.`;
    case "stale":
      return `Stale: ${g.email} changed their password or keys, or you changed yours, since they granted it. It opens nothing until they make it again.`;
  }
}

/** Opens a released grant and takes it up as its grantor, in a client that keeps nothing in this browser. */
async function openGrant(client: VaultClient, g: EmergencyGrant): Promise<Opened> {
  const release = await client.emergency.open(g.grantId);
  const asGrantor = new VaultClient({
    baseUrl: API_URL,
    deriveMasterKey: deriveInWorker,
    deviceName: `Emergency access (${client.account.email})`,
    // A read session may not write: not even the checkpoint a member signs now and then while listing items.
    ...(release.level === "read" && { checkpointEvery: Number.POSITIVE_INFINITY }),
  });
  await asGrantor.takeUpEmergency(release);
  return { release, asGrantor };
}

export function GrantedToYou(props: {
  client: VaultClient;
  received: EmergencyGrant[] | null;
  colleagues: Colleagues;
  onOpened(opened: Opened): void;
}) {
  const { client, received, colleagues } = props;
  const { act, run } = useGrantAction(client);
  const open = (g: EmergencyGrant) => void act.run(async () => props.onOpened(await openGrant(client, g)));
  const decline = (g: EmergencyGrant) =>
    confirm(`Decline the emergency access ${g.email} granted you? Only they can grant it again.`) &&
    run(() => client.emergency.remove(g.grantId));
  return (
    <section aria-labelledby="granted-to-you-heading">
      <h2 id="granted-to-you-heading">Granted to you</h2>
      <ErrorNote error={act.error} />
      {received?.length === 0 && <p>Nobody has granted you emergency access.</p>}
      <ul class="list" aria-label="Emergency access granted to you">
        {(received ?? []).map((g) => (
          <li key={g.grantId}>
            <div>
              <GrantTitle grant={g} />
              <p class="meta">{LEVEL_GIVES[g.level]}</p>
              <p>{receivedStatus(g)}</p>
              {g.status !== "stale" && <GrantorKey client={client} grant={g} colleagues={colleagues} />}
            </div>
            {g.status === "idle" && (
              <button type="button" disabled={act.busy} onClick={() => run(() => client.emergency.request(g.grantId))}>
                Ask for access
              </button>
            )}
            {g.status === "released" && (
              <button type="button" disabled={act.busy} onClick={() => open(g)}>
                Open
              </button>
            )}
            <button type="button" class="secondary" disabled={act.busy} onClick={() => decline(g)}>
              Decline
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The grantor's key, with the comparison, while this device has not checked it (opening needs it checked). */
function GrantorKey({ client, grant, colleagues }: { client: VaultClient; grant: EmergencyGrant; colleagues: Colleagues }) {
  const grantor = colleagues.people?.find((p) => p.userId === grant.grantorId);
  if (!grantor || keyChecked(grantor)) return null;
  return (
    <div class="card" role="region" aria-label={`${grant.email}'s key`}>
      <p>Compare {grant.email}&apos;s key with them before you open their account: this device opens it only for a key you checked.</p>
      <KeyCheck client={client} person={grantor} onChecked={colleagues.read} />
    </div>
  );
}
