/**
 * Security: second factors (an authenticator app, security keys and passkeys, recovery codes),
 * the passkeys that sign in (and, with the PRF, unlock), the organization's policies (what the
 * server enforces, what only clients apply; owners set them), and k-of-n account recovery:
 * enrolling, the requests to recover this account, and the requests this user is asked to approve
 * as a trustee.
 */
import { Factors } from "./factors";
import { AccountPasskeys } from "./passkeys";
import { PolicyView } from "./policies";
import { RecoveryEnrolment } from "./recovery";
import { TrusteeTasks } from "./trustee";

export function Security() {
  return (
    <main>
      <h1>Security</h1>
      <Factors />
      <AccountPasskeys />
      <PolicyView />
      <RecoveryEnrolment />
      <TrusteeTasks />
    </main>
  );
}
