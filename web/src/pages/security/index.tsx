/**
 * Security: second factors (an authenticator app, security keys and passkeys, recovery
 * codes), the organization's policies (what the server enforces, what only clients apply), and
 * k-of-n account recovery: enrolling, the requests to recover this account, and the requests this
 * user is asked to approve as a trustee.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, mayChangePolicies, type Policies } from "../../../../sdk";
import { currentClient } from "../../session";
import { ErrorNote, useAction } from "../../components/ui";
import { Factors } from "./factors";
import { RecoveryEnrolment } from "./recovery";
import { TrusteeTasks } from "./trustee";

export function Security() {
  return (
    <main>
      <h1>Security</h1>
      <Factors />
      <PolicyView />
      <RecoveryEnrolment />
      <TrusteeTasks />
    </main>
  );
}

/**
 * The policies with the second factor requirement turned over, as the server stored them; a change
 * the server says would shut people out is asked about first, naming them (null: not made).
 */
async function toggledRequirement(client: ReturnType<typeof currentClient>, p: Policies): Promise<Policies | null> {
  const next = {
    requireSecondFactor: !p.requireSecondFactor,
    ...(p.minKdf && { minKdf: p.minKdf }),
    ...(p.inviteMaxLifetime && { inviteMaxLifetime: p.inviteMaxLifetime }),
    recoveryMinThreshold: p.recoveryMinThreshold,
    client: p.client,
  };
  try {
    return await client.factors.setPolicies(next);
  } catch (err) {
    if (!(err instanceof ApiError && err.code === "CONFLICT" && err.field === "requireSecondFactor")) throw err;
    if (!confirm(`${err.message.replace(/ To make it anyway.*$/, "")}\n\nRequire a second factor anyway?`)) return null;
    const confirmed = { ...next, confirmLockOut: ["requireSecondFactor" as const] };
    return client.factors.setPolicies(confirmed);
  }
}

/** The organization's policies, which the server enforces or clients apply; an owner turns the second factor requirement on or off. */
function PolicyView() {
  const client = currentClient();
  const [p, setP] = useState<Policies | null>(null);
  const act = useAction();
  useEffect(() => void act.run(async () => setP(await client.factors.policies())), []);
  const owner = mayChangePolicies(client.account.role);
  const toggle = () =>
    void act.run(async () => {
      const next = await toggledRequirement(client, p!);
      if (next) setP(next);
    });
  if (!p) return <ErrorNote error={act.error} />;
  return (
    <section aria-labelledby="policies">
      <h2 id="policies">Your organization&apos;s policies</h2>
      <table>
        <tbody>
          <tr>
            <th scope="row">Second factor required</th>
            <td data-testid="policy-2fa">{p.requireSecondFactor ? "Yes" : "No"}</td>
            <td>Enforced by the server</td>
          </tr>
          <tr>
            <th scope="row">Least password protection (KDF)</th>
            <td>{p.minKdf ? `Argon2id ${p.minKdf.argon2idMemoryKiB} KiB × ${p.minKdf.argon2idIterations}` : "The server's floor"}</td>
            <td>Enforced by the server</td>
          </tr>
          <tr>
            <th scope="row">Longest invite</th>
            <td>{p.inviteMaxLifetime ?? "30 days"}</td>
            <td>Enforced by the server</td>
          </tr>
          <tr>
            <th scope="row">Fewest recovery trustees</th>
            <td>{p.recoveryMinThreshold}</td>
            <td>Enforced by the server</td>
          </tr>
          <tr>
            <th scope="row">Least password strength</th>
            <td>{p.client.minPasswordScore} of 4</td>
            <td>Applied by apps only</td>
          </tr>
        </tbody>
      </table>
      {owner && (
        <button type="button" class="secondary" onClick={toggle}>
          {p.requireSecondFactor ? "Stop requiring a second factor" : "Require a second factor"}
        </button>
      )}
      <ErrorNote error={act.error} />
    </section>
  );
}
