/**
 * The grantor is told on every device: while someone asked for emergency access to this account
 * (the request waits, or its wait is over), a banner at the top of every page says who, and when
 * it opens, with Refuse. A listing that fails its signature checks is said here too: a server that
 * hid a request would otherwise go unseen.
 */
import { SecurityError, sentence, type VaultClient } from "../../sdk";
import type { EmergencyGrant } from "../../sdk/client";
import { useGrantAction, useGrants, usePolledGrants } from "./emergency-grants";
import { LEVEL_ASKED, when } from "./pages/emergency/words";
import { ErrorNote } from "./components/ui";

function requestLine(g: EmergencyGrant): string {
  return g.status === "released"
    ? `${g.email} asked for emergency access to your account, and the wait ended on ${when(g.availableAt)}: they can open it unless you refuse.`
    : `${g.email} asked for emergency access to your account. It opens ${when(g.availableAt)} unless you refuse.`;
}

export function EmergencyBanner({ client }: { client: VaultClient }) {
  usePolledGrants(client);
  const { grants, error } = useGrants(client);
  const { act, run } = useGrantAction(client);
  const asked = grants?.granted.filter((g) => g.status === "waiting" || g.status === "released") ?? [];
  const problem = error instanceof SecurityError ? sentence(error) : null;
  if (asked.length === 0 && !problem && !act.error) return null;
  const refuse = (g: EmergencyGrant) => run(() => client.emergency.refuse(g.grantId));
  return (
    <section class="warning" aria-label="Emergency access requests">
      {asked.map((g) => (
        <p key={g.grantId}>
          {requestLine(g)} {LEVEL_ASKED[g.level]}{" "}
          <button type="button" class="danger" disabled={act.busy} onClick={() => refuse(g)}>
            Refuse
          </button>{" "}
          <a href="#/emergency">Emergency access</a>
        </p>
      ))}
      <ErrorNote error={act.error ?? problem} />
    </section>
  );
}
