/** Registering: the first user (who makes the organization), or an invitee with the link they were sent. */
import { useEffect, useState } from "preact/hooks";
import type { CheckedInvite } from "../../../sdk";
import { InputError, sentence } from "../../../sdk";
import { go, newClient, rememberEmail, signedIn } from "../session";
import { Busy, ErrorNote, Field, inputValue, nextPaint, useAction, Submit } from "../components/ui";
import { KDF_NOTE } from "../components/kdf-note";

/** Registration: the first user, or an invitee with the link's code (token, binding secret and the inviter's key fingerprint). */
export function Register({ inviteToken }: { inviteToken?: string }) {
  const { invite, error } = useCheckedInvite(inviteToken);
  if (inviteToken && error) {
    return (
      <main>
        <h1>This invite cannot be used</h1>
        <p class="error" role="alert">
          {error}
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
      {invite && <InviteDetails invite={invite} />}
      <RegisterForm invite={invite} inviteToken={inviteToken} />
      <p>
        <a href="#/login">I already have an account</a>
      </p>
    </main>
  );
}

/** The invite an invite link names, checked against the link (or why it cannot be used). */
function useCheckedInvite(inviteToken?: string) {
  const [invite, setInvite] = useState<CheckedInvite | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!inviteToken) return;
    newClient()
      .invites.redeem(inviteToken)
      .then(setInvite, (err) => setError(sentence(err)));
  }, [inviteToken]);
  return { invite, error };
}

/** What the invite says, and whether this browser could check that the inviter signed it. */
function InviteDetails({ invite }: { invite: CheckedInvite }) {
  return (
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
          Not checked: this link has no inviter's key fingerprint, so the details above are the server's word. Ask for the whole link to be
          sure.
        </p>
      )}
    </div>
  );
}

/** The new account: its email (the invite's, if invited), an organization for the first user, and the master password twice. */
function RegisterForm({ invite, inviteToken }: { invite: CheckedInvite | null; inviteToken?: string }) {
  const [email, setEmail] = useState(invite?.email ?? "");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [orgName, setOrgName] = useState("");
  const action = useAction();
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
      await signedIn(client);
      go("#/vaults");
    });
  };
  return (
    <>
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
        <NewMasterPassword password={password} confirm={confirm} onPassword={setPassword} onConfirm={setConfirm} />
        <Submit busy={action.busy}>Create account</Submit>
      </form>
      {action.busy && <Busy label={`Creating your keys. ${KDF_NOTE}`} />}
      <ErrorNote error={action.error} />
    </>
  );
}

function NewMasterPassword(props: { password: string; confirm: string; onPassword(value: string): void; onConfirm(value: string): void }) {
  return (
    <>
      <Field
        id="reg-password"
        label="Master password"
        hint="At least 12 characters and hard to guess: a few random words work well. It never leaves this browser, and neither the server nor an administrator can reset it: if you forget it, only the trustees you choose for account recovery (on the Security page, once signed in) can let you back in."
      >
        <input
          id="reg-password"
          type="password"
          autocomplete="new-password"
          required
          aria-describedby="reg-password-hint"
          value={props.password}
          onInput={(e) => props.onPassword(inputValue(e))}
        />
      </Field>
      <Field id="reg-confirm" label="Master password, again">
        <input
          id="reg-confirm"
          type="password"
          autocomplete="new-password"
          required
          value={props.confirm}
          onInput={(e) => props.onConfirm(inputValue(e))}
        />
      </Field>
    </>
  );
}
