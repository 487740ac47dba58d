/**
 * Security: second factors (an authenticator app, security keys and passkeys, recovery
 * codes), the organization's policies (what the server enforces, what only clients apply), and
 * k-of-n account recovery: enrolling, the requests to recover this account, and the requests this
 * user is asked to approve as a trustee.
 */
import { useEffect, useState } from "preact/hooks";
import { mayBeTrustee, mayChangePolicies, type CheckedMember, type FactorInfo, type Policies, type RecoveryTask } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, ErrorNote, Field, inputValue, PasswordField, Submit, useAction } from "../ui";

const when = (iso: string) => new Date(iso).toLocaleString();

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

function Factors() {
  const client = currentClient();
  const [list, setList] = useState<{ factors: FactorInfo[]; recoveryCodesLeft: number; required: boolean } | null>(null);
  const [totp, setTotp] = useState<{ secret: string; uri: string; setupToken: string } | null>(null);
  const [code, setCode] = useState("");
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [codes, setCodes] = useState<string[] | null>(null);
  const act = useAction();
  const reload = () => act.run(async () => setList(await client.factors.list()));
  useEffect(() => void reload(), []);
  const shown = (r: { recoveryCodes?: string[] }) => r.recoveryCodes && setCodes(r.recoveryCodes);

  const startTotp = () => void act.run(async () => setTotp(await client.factors.setupTotp()));
  const confirmTotp = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      shown(await client.factors.confirmTotp(totp!.setupToken, code, name || "Authenticator app", password || undefined));
      setTotp(null);
      setCode("");
      setList(await client.factors.list());
    });
  };
  const addKey = () =>
    void act.run(async () => {
      const { startRegistration } = await import("@simplewebauthn/browser");
      shown(
        await client.factors.enrolWebauthn(
          name || "Security key",
          (options) => startRegistration({ optionsJSON: options as never }),
          password || undefined,
        ),
      );
      setList(await client.factors.list());
    });
  const remove = (f: FactorInfo) =>
    void act.run(async () => {
      await client.factors.remove(f.factorId, password);
      setPassword("");
      setList(await client.factors.list());
    });
  const newCodes = () =>
    void act.run(async () => {
      setCodes(await client.factors.newRecoveryCodes(password));
      setPassword("");
      setList(await client.factors.list());
    });

  return (
    <section aria-labelledby="factors">
      <h2 id="factors">Second factors</h2>
      <p>
        A second factor stops someone who learned your master password from downloading your vaults. It does not protect against a dishonest
        server: that is what the encryption and signatures are for.
      </p>
      {list?.required && list.factors.length === 0 && (
        <p class="error" role="alert">
          Your organization requires a second factor: enrol one here, then log in again to reach your vaults.
        </p>
      )}
      {!list && act.busy && <Busy label="Loading…" />}
      {list && (
        <ul data-testid="factor-list">
          {list.factors.map((f) => (
            <li key={f.factorId}>
              {f.kind === "totp" ? "Authenticator app" : "Security key"}: <strong>{f.name}</strong> (added {when(f.createdAt)}
              {f.lastUsedAt ? `, last used ${when(f.lastUsedAt)}` : ""}){" "}
              <button type="button" class="secondary" disabled={!password} onClick={() => remove(f)}>
                Remove
              </button>
            </li>
          ))}
          {list.factors.length === 0 && <li>None yet.</li>}
        </ul>
      )}
      {list && <p>{list.recoveryCodesLeft} recovery codes left.</p>}
      <PasswordField
        id="factor-password"
        label="Master password (to add or remove a factor, or make new recovery codes)"
        autocomplete="current-password"
        value={password}
        onInput={setPassword}
      />
      <Field id="factor-name" label="Name for a new factor">
        <input id="factor-name" value={name} onInput={(e) => setName(inputValue(e))} placeholder="Phone, YubiKey…" />
      </Field>
      <p>
        <button type="button" onClick={startTotp}>
          Add an authenticator app
        </button>{" "}
        <button type="button" onClick={addKey}>
          Add a security key or passkey
        </button>
      </p>
      {totp && (
        <form onSubmit={confirmTotp}>
          <p>
            Add this to your authenticator app (the address is what a QR code holds), then type the code it shows:
            <br />
            <code data-testid="totp-uri">{totp.uri}</code>
            <br />
            Secret: <code data-testid="totp-secret">{totp.secret}</code>
          </p>
          <Field id="totp-code" label="Code from the app">
            <input id="totp-code" autocomplete="one-time-code" required value={code} onInput={(e) => setCode(inputValue(e))} />
          </Field>
          <Submit busy={act.busy}>Enrol the app</Submit>
        </form>
      )}
      <p>
        <button type="button" class="secondary" disabled={!password || !list?.factors.length} onClick={newCodes}>
          Make new recovery codes
        </button>
      </p>
      {codes && (
        <div class="note" role="status">
          <p>Your recovery codes: each signs in once if you lose your factors. Keep them offline; they are not shown again.</p>
          <ul data-testid="recovery-codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      <ErrorNote error={act.error} />
    </section>
  );
}

function PolicyView() {
  const client = currentClient();
  const [p, setP] = useState<Policies | null>(null);
  const act = useAction();
  useEffect(() => void act.run(async () => setP(await client.factors.policies())), []);
  const owner = mayChangePolicies(client.account.role);
  const toggle = () =>
    void act.run(async () => {
      setP(
        await client.factors.setPolicies({
          requireSecondFactor: !p!.requireSecondFactor,
          ...(p!.minKdf && { minKdf: p!.minKdf }),
          ...(p!.inviteMaxLifetime && { inviteMaxLifetime: p!.inviteMaxLifetime }),
          recoveryMinThreshold: p!.recoveryMinThreshold,
          client: p!.client,
        }),
      );
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

function RecoveryEnrolment() {
  const client = currentClient();
  const [status, setStatus] = useState<Awaited<ReturnType<typeof client.recovery.status>> | undefined>(undefined);
  const [requests, setRequests] = useState<Array<{ requestId: string; status: string; createdAt: string; approvedBy?: string[] }>>([]);
  const [members, setMembers] = useState<CheckedMember[]>([]);
  const [chosen, setChosen] = useState<string[]>([]);
  const [k, setK] = useState(2);
  const act = useAction();
  const me = client.account.userId;
  const reload = async () => {
    setStatus(await client.recovery.status());
    setRequests((await client.recovery.requests()).requests);
  };
  useEffect(
    () =>
      void act.run(async () => {
        await reload();
        setMembers((await client.orgMembers()).filter((m) => m.userId !== me && !m.removedAt && mayBeTrustee(m.role)));
      }),
    [],
  );
  const enrol = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      await client.recovery.enrol(chosen, k);
      await reload();
    });
  };
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
          {!status.current && <strong>Stale: made under an earlier password. Enrol again.</strong>}
        </p>
      )}
      {requests
        .filter((r) => r.status === "pending")
        .map((r) => (
          <p key={r.requestId} class="error" role="alert">
            Someone asked to recover your account on {when(r.createdAt)}
            {r.status === "opened" ? ", and a device signed in with it" : ""}. If it was not you,{" "}
            <button type="button" onClick={() => cancel(r.requestId)}>
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
      <form onSubmit={enrol}>
        <fieldset>
          <legend>Trustees (owners and admins)</legend>
          {members.map((m) => (
            <label key={m.userId}>
              <input
                type="checkbox"
                checked={chosen.includes(m.userId)}
                onChange={(e) =>
                  setChosen((e.currentTarget as HTMLInputElement).checked ? [...chosen, m.userId] : chosen.filter((id) => id !== m.userId))
                }
              />{" "}
              {m.email} {m.trust === "checked" || m.trust === "invite" ? "(verified)" : "(not verified: compare fingerprints first)"}
            </label>
          ))}
        </fieldset>
        <Field id="recovery-k" label="How many of them must approve">
          <input id="recovery-k" type="number" min={2} max={10} value={k} onInput={(e) => setK(Number(inputValue(e)))} />
        </Field>
        <Submit busy={act.busy} disabled={chosen.length < 2}>
          {status ? "Enrol again" : "Enrol in account recovery"}
        </Submit>
      </form>
      <ErrorNote error={act.error} />
    </section>
  );
}

function TrusteeTasks() {
  const client = currentClient();
  const [tasks, setTasks] = useState<RecoveryTask[]>([]);
  const [codes, setCodes] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const act = useAction();
  const reload = () => act.run(async () => setTasks(await client.recovery.tasks()));
  useEffect(() => void reload(), []);
  const approve = (t: RecoveryTask) =>
    void act.run(async () => {
      const { confirmation } = await client.recovery.approve(t.requestId, codes[t.requestId] ?? "");
      setDone(
        `You approved ${t.email}'s recovery: your share went to their new device only. Now read this code back to them: ${confirmation}`,
      );
      setTasks(await client.recovery.tasks());
    });
  return (
    <section aria-labelledby="tasks">
      <h2 id="tasks">Recoveries you are asked to approve</h2>
      {tasks.length === 0 && <p>None.</p>}
      {tasks.map((t) => (
        <div key={t.requestId} class="note" data-testid="recovery-task">
          <p>
            <strong>{t.email}</strong> asked to recover their account on {when(t.createdAt)} ({t.approvedBy.length} of {t.threshold}{" "}
            approvals). Call them on a number you know, and ask for the code their new device shows. Approve only if it matches.
          </p>
          {t.approved ? (
            <p>You approved it.</p>
          ) : (
            <>
              <Field id={`code-${t.requestId}`} label="The code they read out">
                <input
                  id={`code-${t.requestId}`}
                  value={codes[t.requestId] ?? ""}
                  onInput={(e) => setCodes({ ...codes, [t.requestId]: inputValue(e) })}
                />
              </Field>
              <button type="button" onClick={() => approve(t)}>
                Approve
              </button>
            </>
          )}
        </div>
      ))}
      {done && (
        <p class="note" role="status" data-testid="recovery-confirmation">
          {done}
        </p>
      )}
      <ErrorNote error={act.error} />
    </section>
  );
}
