/**
 * Logging in: the email and master password, then a second step when the account has a factor; or
 * a passkey (passkey-sign-in.tsx), which unlocks too when it keeps the PRF, else asks the password.
 */
import { useEffect, useState } from "preact/hooks";
import type { SecondFactorAnswer, SecondFactorChallenge, VaultClient } from "../../../sdk";
import { go, lastEmail, newClient, rememberEmail, signedIn, takeEndedNotice } from "../session";
import { Busy, ErrorNote, Field, inputValue, nextPaint, useAction, Submit } from "../components/ui";
import { KDF_NOTE } from "../components/kdf-note";
import { securityKeyAddressProblem } from "../components/security-key-address";
import { InputError } from "../../../sdk";
import { PasskeyButton, PasskeyPassword, type PasskeyWaiting } from "./passkey-sign-in";

export function Login() {
  const [endedElsewhere] = useState(takeEndedNotice);
  const { email, setEmail, password, setPassword, step, action, submit } = usePasswordLogin();
  const [passkeyWaiting, setPasskeyWaiting] = useState<PasskeyWaiting | null>(null);
  const offer = useRegistrationOffer();
  return (
    <main>
      {offer?.firstAccount && <FirstAccount />}
      <h1>Log in to your vault</h1>
      {endedElsewhere && (
        <p class="note" role="status">
          {endedElsewhere}
        </p>
      )}
      {step ? (
        <SecondStep step={step} />
      ) : passkeyWaiting ? (
        <PasskeyPassword waiting={passkeyWaiting} onSignedIn={landSignedIn} onCancel={() => setPasskeyWaiting(null)} />
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
      {!step && !passkeyWaiting && (
        <PasskeyButton
          onSignedIn={landSignedIn}
          onWaiting={(waiting) => {
            action.clear();
            setPasskeyWaiting(waiting);
          }}
          disabled={action.busy}
        />
      )}
      <OtherWays offer={offer} />
    </main>
  );
}

/** The login by email and master password, with its second step when the account has a factor. */
function usePasswordLogin() {
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
      await landSignedIn(client);
    });
  };
  return { email, setEmail, password, setPassword, step, action, submit };
}

/**
 * A login (by password, or by passkey) signed in and unlocked: the email remembered, the page to
 * land on, and the login kept, sealed under the key it opened (session.ts `signedIn`).
 */
async function landSignedIn(client: VaultClient): Promise<void> {
  rememberEmail(client.account.email);
  // A member of an organization that requires a second factor, without one: straight to enrolling it.
  const factors = await client.factors.list().catch(() => null);
  // The page to land on is set before the shell shows: a page opened the moment it shows is not left again.
  go(factors?.required && factors.factors.length === 0 ? "#/security" : "#/vaults");
  await signedIn(client);
}

/**
 * What the server says of registering, asked once (null until it answers, or when it cannot be
 * asked: then the page offers what it always did). A hint for what to show first: the login stays.
 */
function useRegistrationOffer() {
  const [offer, setOffer] = useState<{ mode: string; firstAccount: boolean } | null>(null);
  useEffect(() => {
    void newClient()
      .registrationOffer()
      .then(setOffer, () => undefined);
  }, []);
  return offer;
}

/** Where else a person may be headed: registering (as the server allows it), an invite, recovery. */
function OtherWays({ offer }: { offer: { mode: string; firstAccount: boolean } | null }) {
  return (
    <p>
      {offer?.mode === "open" && !offer.firstAccount && (
        <>
          New here? <a href="#/register">Create an account</a>.{" "}
        </>
      )}
      {offer === null && (
        <>
          First time on this server? <a href="#/register">Create the first account</a>.{" "}
        </>
      )}
      Invited? Open the link you were sent. Forgot your master password? <a href="#/recover">Recover your account with your trustees</a>.
    </p>
  );
}

/** An empty server's first page leads with making the first account. */
function FirstAccount() {
  return (
    <section class="card note" aria-labelledby="first-account-heading">
      <h2 id="first-account-heading">This server has no accounts yet</h2>
      <p>
        Create the first account: you become the owner of a new organization, and invite your team from there. Whoever registers first owns
        this server&apos;s first organization, so do it now.
      </p>
      <p>
        <a class="button" href="#/register">
          Create the first account
        </a>
      </p>
    </section>
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
  // Remembered, this browser skips the second step at its next logins (with the master password) for 30 days.
  const [remember, setRemember] = useState(false);
  const key = useAction();
  const rpId = (challenge.webauthn as { rpId?: string } | undefined)?.rpId;
  const keyAddress = securityKeyAddressProblem(location, rpId);
  const useKey = () =>
    void key.run(async () => {
      if (keyAddress) throw new InputError(keyAddress);
      const { startAuthentication } = await import("@simplewebauthn/browser");
      resolve({ webauthn: await startAuthentication({ optionsJSON: challenge.webauthn as never }), rememberDevice: remember });
    });
  const submit = (e: Event) => {
    e.preventDefault();
    const typed = code.trim();
    resolve({ ...(/^\d{6}$/.test(typed) ? { totpCode: typed } : { recoveryCode: typed }), rememberDevice: remember });
  };
  return (
    <section aria-labelledby="second-step">
      <h2 id="second-step">Second step</h2>
      {challenge.retry && (
        <p class="error" role="alert">
          That was not right (a wrong password or code, or a code used already). Try again.
        </p>
      )}
      <p>
        <label>
          <input type="checkbox" checked={remember} onChange={(e) => setRemember((e.currentTarget as HTMLInputElement).checked)} /> Remember
          this device for 30 days
        </label>
      </p>
      {challenge.methods.includes("webauthn") && (
        <p>
          <button type="button" onClick={useKey} disabled={key.busy}>
            Use your security key or passkey
          </button>
        </p>
      )}
      {challenge.methods.includes("webauthn") && keyAddress && <p class="note">{keyAddress}</p>}
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
