/**
 * Passkeys for signing in (sdk/client/passkey-logins.ts): not the second factors above, a passkey
 * here stands for the email, the master password and the second step together. One made by an
 * authenticator with the WebAuthn PRF extension unlocks the vault too, without the master
 * password; one without it signs in, and the master password unlocks. Adding one takes the master
 * password; the organization's policy may forbid them (nothing is offered) or require them.
 */
import { useEffect, useState } from "preact/hooks";
import type { PasskeyLoginInfo, PasskeySignInPolicy } from "../../../../sdk";
import { currentClient } from "../../session";
import { browserPasskeys } from "../../passkey-authenticator";
import { Busy, ErrorNote, Field, inputValue, nextPaint, PasswordField, Submit, useAction } from "../../components/ui";
import { when } from "./when";

interface Listed {
  passkeys: PasskeyLoginInfo[];
  policy: PasskeySignInPolicy;
}

export function AccountPasskeys() {
  const k = usePasskeys();
  const { list, act } = k;
  return (
    <section aria-labelledby="account-passkeys">
      <h2 id="account-passkeys">Passkeys for signing in</h2>
      <p>
        A passkey signs you in without your email and master password: your device asks for your fingerprint, face or PIN instead. When its
        authenticator offers the PRF extension, the passkey unlocks your vault too, without your master password; otherwise it signs you in
        and your master password unlocks. Your master password keeps working either way.
      </p>
      {list?.policy === "forbidden" && (
        <p class="note" role="status" data-testid="passkey-policy">
          Your organization does not allow signing in with a passkey: none can be added, and the ones listed here do not sign in while that
          policy stands.
        </p>
      )}
      {list?.policy === "required" && (
        <p class="note" role="status" data-testid="passkey-policy">
          Your organization requires signing in with a passkey: once you have one, your master password alone no longer signs you in. Keep a
          second passkey, or enrol in account recovery below, in case you lose it.
        </p>
      )}
      {!list && act.busy && <Busy label="Loading…" />}
      {list && <PasskeyList passkeys={list.passkeys} busy={act.busy} onRemove={k.remove} />}
      {list && list.policy !== "forbidden" && <AddForm k={k} />}
      <p>Changing your master password because the old one may be known removes every passkey that unlocks: register them again after.</p>
      {k.added && (
        <p class="note" role="status">
          {k.added.unlock
            ? `“${k.added.name}” added: it signs you in and unlocks your vault.`
            : `“${k.added.name}” added: it signs you in, and your master password unlocks (its authenticator does not offer the PRF extension).`}
        </p>
      )}
      <ErrorNote error={act.error} />
    </section>
  );
}

/** The account's passkeys and policy, and the actions on them (each reads the list again). */
function usePasskeys() {
  const client = currentClient();
  const [list, setList] = useState<Listed | null>(null);
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [added, setAdded] = useState<PasskeyLoginInfo | null>(null);
  const [adding, setAdding] = useState(false);
  const act = useAction();
  const reload = async () => setList(await client.accountPasskeys.list());
  useEffect(() => void act.run(reload), []);
  const add = (e: Event) => {
    e.preventDefault();
    setAdded(null);
    setAdding(true);
    void act
      .run(async () => {
        await nextPaint();
        const info = await client.accountPasskeys.add({ name: name.trim(), password, authenticator: browserPasskeys });
        // The password is not kept after: an unattended session must not register someone else's passkey.
        setPassword("");
        setName("");
        setAdded(info);
        await reload();
      })
      .finally(() => setAdding(false));
  };
  const remove = (p: PasskeyLoginInfo) => {
    const what = p.unlock ? "sign you in or unlock your vault" : "sign you in";
    if (!confirm(`Remove the passkey “${p.name}”? It will no longer ${what}.`)) return;
    setAdded(null);
    void act.run(async () => {
      await client.accountPasskeys.remove(p.credentialId);
      await reload();
    });
  };
  return { list, act, adding, name, setName, password, setPassword, added, add, remove };
}

type State = ReturnType<typeof usePasskeys>;

function PasskeyList({ passkeys, busy, onRemove }: { passkeys: PasskeyLoginInfo[]; busy: boolean; onRemove(p: PasskeyLoginInfo): void }) {
  return (
    <ul data-testid="passkey-list">
      {passkeys.map((p) => (
        <li key={p.credentialId}>
          <strong>{p.name}</strong>: {p.unlock ? "Unlocks your vault" : "Signs in; your master password unlocks"} (added {when(p.createdAt)}
          {p.lastUsedAt ? `, last used ${when(p.lastUsedAt)}` : ", never used"}){" "}
          <button type="button" class="secondary" disabled={busy} onClick={() => onRemove(p)}>
            Remove
          </button>
        </li>
      ))}
      {passkeys.length === 0 && <li>None yet.</li>}
    </ul>
  );
}

/** Adding one: its name and the master password; then the browser's prompts (a second touch when the PRF is answered only at sign-in). */
function AddForm({ k }: { k: State }) {
  return (
    <form onSubmit={k.add} aria-label="Add a passkey for signing in">
      <Field id="passkey-name" label="Name for the passkey">
        <input
          id="passkey-name"
          required
          maxLength={64}
          value={k.name}
          onInput={(e) => k.setName(inputValue(e))}
          placeholder="Laptop, phone…"
        />
      </Field>
      <PasswordField
        id="passkey-add-password"
        label="Master password (to register a passkey)"
        autocomplete="current-password"
        required
        value={k.password}
        onInput={k.setPassword}
      />
      <Submit busy={k.act.busy}>Add a passkey</Submit>
      {k.adding && (
        <Busy label="Follow your browser's prompts: it may ask for your passkey twice, to make it and to check that it unlocks…" />
      )}
    </form>
  );
}
