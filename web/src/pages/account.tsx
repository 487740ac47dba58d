/** Log in, register (first user, or with an invite link), unlock after a lock. */
import { useEffect, useState } from "preact/hooks";
import { InputError, sentence } from "../errors";
import type { CheckedInvite, SecondFactorAnswer, SecondFactorChallenge } from "../../../sdk";
import { currentClient, go, lastEmail, logout, newClient, rememberEmail, signedIn, takeEndedNotice, unlocked } from "../session";
import { Busy, ErrorNote, Field, inputValue, nextPaint, useAction, Submit } from "../ui";

const KDF_NOTE = "Deriving your key from your password (Argon2id, 64 MiB, in the background): this takes a moment…";

export function Login() {
  const [endedElsewhere] = useState(takeEndedNotice);
  // After a reload (or a logout) the email of the last login is filled in: only the password is asked.
  const [email, setEmail] = useState(lastEmail);
  const [password, setPassword] = useState("");
  const [step, setStep] = useState<PendingStep | null>(null);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await nextPaint();
      // The second step, when the account has a factor: the form below answers it.
      const client = newClient({ secondFactor: (challenge) => new Promise((resolve) => setStep({ challenge, resolve })) });
      try {
        await client.login(email, password);
      } finally {
        setStep(null);
      }
      rememberEmail(client.account.email);
      signedIn(client);
      // A member of an organization that requires a second factor, without one: straight to enrolling it.
      const factors = await client.factors.list().catch(() => null);
      go(factors?.required && factors.factors.length === 0 ? "#/security" : "#/vaults");
    });
  };
  return (
    <main>
      <h1>Log in to your vault</h1>
      {endedElsewhere && (
        <p class="note" role="status">
          This browser&apos;s session was ended (from another device, or because its login was used twice). Log in again.
        </p>
      )}
      {step ? (
        <SecondStep step={step} />
      ) : (
        <form onSubmit={submit}>
          <Field id="login-email" label="Email">
            <input id="login-email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(inputValue(e))} />
          </Field>
          <Field id="login-password" label="Master password">
            <input
              id="login-password"
              type="password"
              autocomplete="current-password"
              autoFocus={email !== ""}
              required
              value={password}
              onInput={(e) => setPassword(inputValue(e))}
            />
          </Field>
          <Submit busy={action.busy}>Log in</Submit>
        </form>
      )}
      {action.busy && !step && <Busy label={KDF_NOTE} />}
      <ErrorNote error={action.error} />
      <p>
        First time on this server? <a href="#/register">Create the first account</a>. Invited? Open the link you were sent. Forgot your
        master password? <a href="#/recover">Recover your account with your trustees</a>.
      </p>
    </main>
  );
}

interface PendingStep {
  challenge: SecondFactorChallenge;
  resolve: (answer: SecondFactorAnswer) => void;
}

/** A login's second step: a code from the authenticator app or a recovery code, or the security key. */
function SecondStep({ step }: { step: PendingStep }) {
  const { challenge, resolve } = step;
  const [code, setCode] = useState("");
  const key = useAction();
  const useKey = () =>
    void key.run(async () => {
      const { startAuthentication } = await import("@simplewebauthn/browser");
      resolve({ webauthn: await startAuthentication({ optionsJSON: challenge.webauthn as never }) });
    });
  const submit = (e: Event) => {
    e.preventDefault();
    const typed = code.trim();
    resolve(/^\d{6}$/.test(typed) ? { totpCode: typed } : { recoveryCode: typed });
  };
  return (
    <section aria-labelledby="second-step">
      <h2 id="second-step">Second step</h2>
      {challenge.retry && (
        <p class="error" role="alert">
          That was not right (a wrong password or code, or a code used already). Try again.
        </p>
      )}
      {challenge.methods.includes("webauthn") && (
        <p>
          <button type="button" onClick={useKey} disabled={key.busy}>
            Use your security key or passkey
          </button>
        </p>
      )}
      <ErrorNote error={key.error} />
      <form onSubmit={submit}>
        <Field
          id="login-code"
          label={challenge.methods.includes("totp") ? "Code from your authenticator app, or a recovery code" : "A recovery code"}
        >
          <input id="login-code" autocomplete="one-time-code" required value={code} onInput={(e) => setCode(inputValue(e))} />
        </Field>
        <Submit busy={false}>Continue</Submit>
      </form>
    </section>
  );
}

/** Registration: the first user, or an invitee with the link's code (token, binding secret and the inviter's key fingerprint). */
export function Register({ inviteToken }: { inviteToken?: string }) {
  const [invite, setInvite] = useState<CheckedInvite | null>(null);
  const [inviteError, setInviteError] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [orgName, setOrgName] = useState("");
  const action = useAction();

  useEffect(() => {
    if (!inviteToken) return;
    newClient()
      .redeemInvite(inviteToken)
      .then(
        (details) => {
          setInvite(details);
          setEmail(details.email);
        },
        (err) => setInviteError(sentence(err)),
      );
  }, [inviteToken]);

  const submit = (e: Event) => {
    e.preventDefault();
    if (password !== confirm)
      return void action.run(async () =>
        Promise.reject(new InputError("The two passwords are not the same: type the same master password twice.")),
      );
    void action.run(async () => {
      await nextPaint();
      const client = newClient();
      await client.register({ email, password, invite: inviteToken, orgName: inviteToken ? undefined : orgName || undefined });
      rememberEmail(client.account.email);
      signedIn(client);
      go("#/vaults");
    });
  };

  if (inviteToken && inviteError) {
    return (
      <main>
        <h1>This invite cannot be used</h1>
        <p class="error" role="alert">
          {inviteError}
        </p>
        <p>
          <a href="#/login">Go to the login page</a>
        </p>
      </main>
    );
  }
  if (inviteToken && !invite)
    return (
      <main>
        <h1>Checking your invite</h1>
        <Busy label="Checking the invite…" />
      </main>
    );

  return (
    <main>
      <h1>{invite ? "Accept your invitation" : "Create the first account"}</h1>
      {invite && (
        <div class="note" data-testid="invite-details">
          <p>
            You are invited to <strong>{invite.orgName ?? "an organization"}</strong> (organization <code>{invite.orgId}</code>) as{" "}
            <strong>{invite.role}</strong>, for <strong>{invite.email}</strong>, until {new Date(invite.expiresAt).toLocaleString()}.
          </p>
          {invite.verified ? (
            <p data-testid="invite-verified">
              Checked: this is the invite <strong>{invite.inviter.email}</strong> signed, with the key your link names (
              <code>{invite.inviterFingerprint}</code>).
            </p>
          ) : (
            <p data-testid="invite-unverified">
              Not checked: this link has no inviter's key fingerprint, so the details above are the server's word. Ask for the whole link to
              be sure.
            </p>
          )}
        </div>
      )}
      <form onSubmit={submit}>
        <Field id="reg-email" label="Email">
          <input
            id="reg-email"
            type="email"
            autocomplete="username"
            required
            readOnly={!!invite}
            value={email}
            onInput={(e) => setEmail(inputValue(e))}
          />
        </Field>
        {!invite && (
          <Field id="reg-org" label="Organization name">
            <input id="reg-org" autocomplete="organization" value={orgName} onInput={(e) => setOrgName(inputValue(e))} />
          </Field>
        )}
        <Field
          id="reg-password"
          label="Master password"
          hint="At least 12 characters and hard to guess: a few random words work well. It never leaves this browser, and nobody can recover it for you."
        >
          <input
            id="reg-password"
            type="password"
            autocomplete="new-password"
            required
            aria-describedby="reg-password-hint"
            value={password}
            onInput={(e) => setPassword(inputValue(e))}
          />
        </Field>
        <Field id="reg-confirm" label="Master password, again">
          <input
            id="reg-confirm"
            type="password"
            autocomplete="new-password"
            required
            value={confirm}
            onInput={(e) => setConfirm(inputValue(e))}
          />
        </Field>
        <Submit busy={action.busy}>Create account</Submit>
      </form>
      {action.busy && <Busy label={`Creating your keys. ${KDF_NOTE}`} />}
      <ErrorNote error={action.error} />
      <p>
        <a href="#/login">I already have an account</a>
      </p>
    </main>
  );
}

export function Unlock() {
  const [password, setPassword] = useState("");
  const action = useAction();
  const client = currentClient();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await nextPaint();
      await client.unlock(password);
      unlocked();
    });
  };
  return (
    <main>
      <h1>Your vault is locked</h1>
      <p>Signed in as {client.account.email}. Enter your master password to open your vaults again.</p>
      <form onSubmit={submit}>
        <Field id="unlock-password" label="Master password">
          <input
            id="unlock-password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(inputValue(e))}
          />
        </Field>
        <Submit busy={action.busy}>Unlock</Submit>
        <button type="button" class="secondary" onClick={() => void logout()}>
          Log out
        </button>
      </form>
      {action.busy && <Busy label={KDF_NOTE} />}
      <ErrorNote error={action.error} />
    </main>
  );
}
