/** Account recovery, as the account's owner sees it: enrolling trustees, and the requests to recover the account. */
import { useEffect, useState } from "preact/hooks";
import { mayBeTrustee, type CheckedMember, type VaultClient } from "../../../../sdk";
import { currentClient } from "../../session";
import { CompareKey } from "../../components/compare-key";
import { ErrorNote, Field, inputValue, Submit, useAction } from "../../components/ui";
import { when } from "./when";

export function RecoveryEnrolment() {
  const client = currentClient();
  const [status, setStatus] = useState<Awaited<ReturnType<typeof client.recovery.status>> | undefined>(undefined);
  const [requests, setRequests] = useState<RecoveryRequest[]>([]);
  const [members, setMembers] = useState<CheckedMember[]>([]);
  const act = useAction();
  const me = client.account.userId;
  const reload = async () => {
    setStatus(await client.recovery.status());
    setRequests((await client.recovery.requests()).requests);
  };
  const loadMembers = async () =>
    setMembers((await client.people.list()).filter((m) => m.userId !== me && !m.removedAt && mayBeTrustee(m.role)));
  useEffect(
    () =>
      void act.run(async () => {
        await reload();
        await loadMembers();
      }),
    [],
  );
  const enrol = (chosen: string[], k: number) =>
    void act.run(async () => {
      await client.recovery.enrol(chosen, k);
      await reload();
    });
  const cancel = (requestId: string) =>
    void act.run(async () => {
      await client.recovery.cancel(requestId);
      await reload();
    });
  const nameOf = (id: string) => members.find((m) => m.userId === id)?.email ?? id;
  return (
    <section aria-labelledby="recovery">
      <h2 id="recovery">Account recovery</h2>
      <p>
        If you forget your master password, some of the people you choose here can together let you back in: each holds one share of a
        secret, and no fewer than the number you set can rebuild it. Neither they alone nor the server can open your account. Choose people
        whose key fingerprint you have compared with them.
      </p>
      {status === null && <p data-testid="recovery-status">You are not enrolled.</p>}
      {status && (
        <p data-testid="recovery-status">
          Enrolled: any {status.threshold} of {status.trustees.map(nameOf).join(", ")}.{" "}
          {!status.current && <strong>Stale: made under an earlier password or earlier keys. Enrol again.</strong>}
          {status.current && status.version === undefined && (
            <strong>Made before enrolments had versions: enrol again, so that your trustees can tell it from one you replaced.</strong>
          )}
        </p>
      )}
      <RecoveryRequests requests={requests} nameOf={nameOf} onCancel={cancel} />
      <CompareTrustees client={client} members={members.filter((m) => !verified(m))} onChecked={() => void act.run(loadMembers)} />
      <EnrolForm members={members} enrolled={!!status} busy={act.busy} onEnrol={enrol} />
      <ErrorNote error={act.error} />
    </section>
  );
}

/** A request to recover this account, as its owner sees it. */
interface RecoveryRequest {
  requestId: string;
  status: string;
  createdAt: string;
  approvedBy?: string[];
}

/** Recoveries of this account: one pending can be cancelled (it may not be the owner's), one completed is said. */
function RecoveryRequests(props: { requests: RecoveryRequest[]; nameOf(id: string): string; onCancel(requestId: string): void }) {
  const { requests, nameOf } = props;
  return (
    <>
      {requests
        .filter((r) => r.status === "pending")
        .map((r) => (
          <p key={r.requestId} class="error" role="alert">
            Someone asked to recover your account on {when(r.createdAt)}
            {r.status === "opened" ? ", and a device signed in with it" : ""}. If it was not you,{" "}
            <button type="button" onClick={() => props.onCancel(r.requestId)}>
              cancel it
            </button>
            .
          </p>
        ))}
      {requests
        .filter((r) => r.status === "completed")
        .map((r) => (
          <p key={r.requestId}>
            Your account was recovered on {when(r.createdAt)}, approved by {(r.approvedBy ?? []).map(nameOf).join(", ")}.
          </p>
        ))}
    </>
  );
}

/** The owners and admins whose keys this browser has not checked: a fingerprint to compare for each. */
function CompareTrustees(props: { client: VaultClient; members: CheckedMember[]; onChecked(): void }) {
  if (props.members.length === 0) return null;
  return (
    <div aria-label="Compare fingerprints" role="group">
      <p>
        Before someone can be your trustee, compare their key fingerprint with them: they read it from their Your key page, in person or by
        phone, and you type it here.
      </p>
      {props.members.map((m) => (
        <CompareKey key={m.userId} client={props.client} userId={m.userId} email={m.email} onChecked={props.onChecked} />
      ))}
    </div>
  );
}

const verified = (m: CheckedMember) => m.trust === "checked" || m.trust === "invite";

/** The trustees chosen among the organization's owners and admins, and how many of them must approve. */
function EnrolForm(props: { members: CheckedMember[]; enrolled: boolean; busy: boolean; onEnrol(chosen: string[], k: number): void }) {
  const [chosen, setChosen] = useState<string[]>([]);
  const [k, setK] = useState(2);
  const submit = (e: Event) => {
    e.preventDefault();
    props.onEnrol(chosen, k);
  };
  return (
    <form onSubmit={submit}>
      <fieldset>
        <legend>Trustees (owners and admins)</legend>
        {props.members.map((m) => (
          <label key={m.userId}>
            <input
              type="checkbox"
              checked={chosen.includes(m.userId)}
              onChange={(e) =>
                setChosen((e.currentTarget as HTMLInputElement).checked ? [...chosen, m.userId] : chosen.filter((id) => id !== m.userId))
              }
            />{" "}
            {m.email} {verified(m) ? "(verified)" : "(not verified: compare fingerprints first)"}
          </label>
        ))}
      </fieldset>

      <Field id="recovery-k" label="How many of them must approve">
        <input id="recovery-k" type="number" min={2} max={10} value={k} onInput={(e) => setK(Number(inputValue(e)))} />
      </Field>
      <Submit busy={props.busy} disabled={chosen.length < 2}>
        {props.enrolled ? "Enrol again" : "Enrol in account recovery"}
      </Submit>
    </form>
  );
}
