/**
 * The organization's policies: every member reads them; an owner sets each one. A change that
 * would shut people out is not made until the owner has read who, and why, and said "Set it
 * anyway": the server's refusal names them (`policyShutsOut`), and requiring a second factor the
 * owner has not enrolled is asked about here before the server is.
 */
import { useEffect, useState } from "preact/hooks";
import { mayChangePolicies, type LockOutPolicy, type Policies } from "../../../../sdk";
import { currentClient } from "../../session";
import { Busy, ErrorNote, useAction } from "../../components/ui";
import { PASSKEY_CHOICES, PolicyFields } from "./policy-fields";
import { changeOf, formOf, lockOutsIn, ownFactorLockOut, type LockOut, type PolicyChange, type PolicyForm } from "./policy-form";

export function PolicyView() {
  const client = currentClient();
  const [policies, setPolicies] = useState<Policies | null>(null);
  const load = useAction();
  useEffect(() => void load.run(async () => setPolicies(await client.factors.policies())), []);
  return (
    <section aria-labelledby="policies">
      <h2 id="policies">Your organization&apos;s policies</h2>
      {!policies && load.busy && <Busy label="Loading…" />}
      <ErrorNote error={load.error} />
      {policies && mayChangePolicies(client.account.role) && <PolicyEditor stored={policies} onSaved={setPolicies} />}
      {policies && !mayChangePolicies(client.account.role) && <PolicyTable p={policies} />}
    </section>
  );
}

/** The policies as the server stored them, for members who may not change them. */
function PolicyTable({ p }: { p: Policies }) {
  const rows: Array<[string, string, string]> = [
    ["Second factor required", p.requireSecondFactor ? "Yes" : "No", "Enforced by the server"],
    ["Signing in with a passkey", passkeyChoice(p), "Enforced by the server"],
    [
      "Least password protection (KDF)",
      p.minKdf
        ? `Argon2id ${p.minKdf.argon2idMemoryKiB} KiB × ${p.minKdf.argon2idIterations}, or PBKDF2 × ${p.minKdf.pbkdf2Iterations}`
        : "The server's floor",
      "Enforced by the server",
    ],
    ["Longest invite", p.inviteMaxLifetime ?? "30d", "Enforced by the server"],
    ["Fewest recovery trustees", String(p.recoveryMinThreshold), "Enforced by the server"],
    ["Least password strength", `${p.client.minPasswordScore} of 4`, "Applied by apps only"],
    ["Idle lock", p.client.idleLockMinutes === undefined ? "None" : `${p.client.idleLockMinutes} minutes`, "Applied by apps only"],
  ];
  return (
    <table>
      <tbody>
        {rows.map(([name, value, how]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
            <td>{how}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const passkeyChoice = (p: Policies) => PASSKEY_CHOICES.find(([value]) => value === (p.passkeySignIn ?? "allowed"))?.[1] ?? "Allowed";

/** What the owner has said "Set it anyway" to: the own-factor warning, and the policies to confirm to the server. */
interface Asked {
  ownFactor: boolean;
  confirm: LockOutPolicy[];
}

/** A change held back until the owner confirms it, with who it shuts out. */
interface Question {
  change: PolicyChange;
  lockOuts: LockOut[];
  asked: Asked;
}

/**
 * Sends the change, unless it needs a question first: requiring a second factor that the owner
 * has not enrolled (asked here: the server refuses only when no owner or admin has one), or a
 * refusal of the server naming who the change shuts out.
 */
async function attempt(stored: Policies, change: PolicyChange, asked: Asked): Promise<{ stored: Policies } | { question: Question }> {
  const client = currentClient();
  const turnsOn = change.requireSecondFactor && !stored.requireSecondFactor;
  if (turnsOn && !asked.ownFactor && (await client.factors.list()).factors.length === 0)
    return { question: { change, lockOuts: [ownFactorLockOut(client.account.email)], asked: { ...asked, ownFactor: true } } };
  try {
    return { stored: await client.factors.setPolicies({ ...change, ...(asked.confirm.length > 0 && { confirmLockOut: asked.confirm }) }) };
  } catch (err) {
    const refused = lockOutsIn(err);
    if (!refused) throw err;
    const confirm = [...new Set([...asked.confirm, ...refused.confirm])];
    return { question: { change, lockOuts: refused.lockOuts, asked: { ownFactor: true, confirm } } };
  }
}

function usePolicyEditor(stored: Policies, onSaved: (p: Policies) => void) {
  const [form, setForm] = useState(() => formOf(stored));
  const [question, setQuestion] = useState<Question | null>(null);
  const [saved, setSaved] = useState(false);
  const act = useAction();
  const send = (change: PolicyChange, asked: Asked) =>
    void act.run(async () => {
      const outcome = await attempt(stored, change, asked);
      if ("question" in outcome) return setQuestion(outcome.question);
      setQuestion(null);
      setForm(formOf(outcome.stored));
      setSaved(true);
      onSaved(outcome.stored);
    });
  return {
    form,
    question,
    saved,
    act,
    // Any edit drops a pending question: it asked about the change as it was.
    edit(next: Partial<PolicyForm>) {
      setForm((f) => ({ ...f, ...next }));
      setQuestion(null);
      setSaved(false);
    },
    submit(e: Event) {
      e.preventDefault();
      send(changeOf(form), { ownFactor: false, confirm: [] });
    },
    confirm: () => question && send(question.change, question.asked),
    cancel: () => setQuestion(null),
  };
}

/** The owner's form: every policy, each with its meaning and bounds; a change that shuts people out is asked about first. */
function PolicyEditor({ stored, onSaved }: { stored: Policies; onSaved(p: Policies): void }) {
  const e = usePolicyEditor(stored, onSaved);
  return (
    <form onSubmit={e.submit} aria-label="Your organization's policies">
      <PolicyFields form={e.form} edit={e.edit} />
      {!e.question && (
        <button type="submit" disabled={e.act.busy}>
          Save policies
        </button>
      )}
      {e.question && <LockOutQuestion lockOuts={e.question.lockOuts} busy={e.act.busy} onConfirm={e.confirm} onCancel={e.cancel} />}
      {e.saved && <p role="status">Policies saved.</p>}
      <ErrorNote error={e.act.error} />
    </form>
  );
}

function LockOutQuestion(props: { lockOuts: LockOut[]; busy: boolean; onConfirm(): void; onCancel(): void }) {
  return (
    <div class="note" role="alert" data-testid="policy-lock-out">
      <p>
        <strong>This change would shut people out.</strong> Nothing is changed until you set it anyway.
      </p>
      <ul>
        {props.lockOuts.map((l, i) => (
          <li key={i}>
            {l.label}: {l.who}.
          </li>
        ))}
      </ul>
      <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
        Set it anyway
      </button>{" "}
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}
