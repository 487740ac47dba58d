/**
 * The popup's sign-in: server address, email, master password, then a second factor where the
 * account has one; or the server address and a passkey (with the PRF it unlocks too, otherwise the
 * master password of the account it named unlocks).
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { ask, type VaultState } from "../messages";
import { PasskeyButton, PasskeyPassword } from "./account-passkeys";

interface Challenge {
  methods: string[];
  retry?: boolean;
}

type SignedOut = Extract<VaultState, { state: "signed-out" }>;

export function SignIn({ state, done }: { state: SignedOut; done: () => void }) {
  const [server, setServer] = useState(state.server);
  /** A passkey without the PRF signed in: the email it named, waiting for the master password. */
  const [waiting, setWaiting] = useState<string | undefined>();
  if (waiting) return <PasskeyPassword email={waiting} done={done} cancel={() => setWaiting(undefined)} />;
  return (
    <PasswordSignIn state={state} done={done} server={server} setServer={setServer}>
      <PasskeyButton
        label="Sign in with a passkey"
        server={() => server.trim()}
        onDone={(result) => (result.unlocked ? done() : setWaiting(result.email))}
      />
    </PasswordSignIn>
  );
}

interface PasswordSignInProps {
  state: SignedOut;
  done: () => void;
  server: string;
  setServer: (server: string) => void;
  children: ComponentChildren;
}

/** The password sign-in form, then its second step; `children` (the passkey button) go below its button. */
function PasswordSignIn({ state, done, server, setServer, children }: PasswordSignInProps) {
  const [email, setEmail] = useState(state.email);
  const [password, setPassword] = useState("");
  const [challenge, setChallenge] = useState<Challenge | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const run = async (request: Parameters<typeof ask>[0]) => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await ask<{ secondFactor?: Challenge }>(request);
      if (answer.secondFactor) setChallenge(answer.secondFactor);
      else done();
    } catch (err) {
      setError((err as Error).message);
      if (request.kind === "second-factor") setChallenge(undefined);
    } finally {
      setBusy(false);
    }
  };
  if (challenge)
    return <SecondFactor challenge={challenge} busy={busy} error={error} answer={(code) => run({ kind: "second-factor", ...code })} />;
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void run({ kind: "login", server: server.trim(), email: email.trim(), password });
      }}
    >
      <h1>Sign in to Vault</h1>
      {state.notice && (
        <p class="warning" role="status">
          {state.notice}
        </p>
      )}
      <div class="field">
        <label for="server">Server address</label>
        <input id="server" type="url" required placeholder="https://vault.example.com" value={server} onInput={value(setServer)} />
      </div>
      <div class="field">
        <label for="email">Email</label>
        <input id="email" type="email" autocomplete="username" required value={email} onInput={value(setEmail)} />
      </div>
      <div class="field">
        <label for="password">Master password</label>
        <input id="password" type="password" autocomplete="current-password" required value={password} onInput={value(setPassword)} />
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      {children}
    </form>
  );
}

function SecondFactor(props: {
  challenge: Challenge;
  busy: boolean;
  error?: string;
  answer: (a: { totpCode?: string; recoveryCode?: string }) => void;
}) {
  const [code, setCode] = useState("");
  const totp = props.challenge.methods.includes("totp");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        props.answer(/^\d{6,8}$/.test(code.trim()) ? { totpCode: code.trim() } : { recoveryCode: code.trim() });
      }}
    >
      <h1>Second step</h1>
      {props.challenge.retry && (
        <p class="error" role="alert">
          That code was not right. Try again.
        </p>
      )}
      {!totp && (
        <p class="warning">
          This account's second factor is a security key, which the extension does not use yet: enter one of its recovery codes, or sign in
          on the web vault.
        </p>
      )}
      <div class="field">
        <label for="code">{totp ? "Code from your authenticator app (or a recovery code)" : "Recovery code"}</label>
        <input
          id="code"
          autocomplete="one-time-code"
          required
          value={code}
          onInput={(e) => setCode((e.target as HTMLInputElement).value)}
        />
      </div>
      {props.error && (
        <p class="error" role="alert">
          {props.error}
        </p>
      )}
      <button type="submit" disabled={props.busy}>
        Continue
      </button>
    </form>
  );
}
