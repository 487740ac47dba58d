/** Second factors: an authenticator app, security keys and passkeys, and recovery codes. */
import { useEffect, useState } from "preact/hooks";
import type { FactorInfo } from "../../../../sdk";
import { currentClient } from "../../session";
import { Busy, ErrorNote, Field, inputValue, PasswordField, Submit, useAction } from "../../components/ui";
import { securityKeyAddressProblem } from "../../components/security-key-address";
import { InputError } from "../../../../sdk";
import { when } from "./when";
import { QrCode } from "./qr-code";

export function Factors() {
  const f = useFactors();
  const { list, act, password } = f;
  const keyAddress = securityKeyAddressProblem(location);
  return (
    <section aria-labelledby="factors">
      <h2 id="factors">Second factors</h2>
      <p>
        A second factor stops someone who learned your master password from downloading your vaults. It does not protect against a dishonest
        server: that is what the encryption and signatures are for.
      </p>
      {list?.required && list.factors.length === 0 && (
        <p class="error" role="alert">
          Your organization requires a second factor: enrol one here, with your master password, to reach your vaults.
        </p>
      )}
      {!list && act.busy && <Busy label="Loading…" />}
      {list && <FactorList factors={list.factors} removable={!!password} onRemove={f.remove} />}
      {list && <p>{list.recoveryCodesLeft} recovery codes left.</p>}
      <PasswordField
        id="factor-password"
        label="Master password (to add or remove a factor, or make new recovery codes)"
        autocomplete="current-password"
        value={password}
        onInput={f.setPassword}
      />
      <Field id="factor-name" label="Name for a new factor">
        <input id="factor-name" value={f.name} onInput={(e) => f.setName(inputValue(e))} placeholder="Phone, YubiKey…" />
      </Field>
      <p>
        <button type="button" disabled={!password} onClick={f.startTotp}>
          Add an authenticator app
        </button>{" "}
        <button type="button" disabled={!password} onClick={f.addKey}>
          Add a security key or passkey
        </button>
      </p>
      {keyAddress && (
        <p class="note" data-testid="security-key-address">
          {keyAddress}
        </p>
      )}
      <p>Adding or removing a factor, or making new recovery codes, signs out your other sessions.</p>
      {f.totp && <TotpEnrolment totp={f.totp} code={f.code} busy={act.busy} onCode={f.setCode} onSubmit={f.confirmTotp} />}
      <p>
        <button type="button" class="secondary" disabled={!password || !list?.factors.length} onClick={f.newCodes}>
          Make new recovery codes
        </button>
      </p>
      {f.codes && <RecoveryCodes codes={f.codes} />}
      <ErrorNote error={act.error} />
    </section>
  );
}

/** The account's factors, what is being enrolled, and the actions on them (each reads the list again). */
function useFactors() {
  const client = currentClient();
  const [list, setList] = useState<{ factors: FactorInfo[]; recoveryCodesLeft: number; required: boolean } | null>(null);
  const [totp, setTotp] = useState<TotpSetup | null>(null);
  const [code, setCode] = useState("");
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [codes, setCodes] = useState<string[] | null>(null);
  const act = useAction();
  useEffect(() => void act.run(async () => setList(await client.factors.list())), []);
  const shown = (r: { recoveryCodes?: string[] }) => r.recoveryCodes && setCodes(r.recoveryCodes);
  const startTotp = () => void act.run(async () => setTotp(await client.factors.setupTotp()));
  const confirmTotp = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      shown(await client.factors.confirmTotp(totp!.setupToken, code, name || "Authenticator app", password));
      setTotp(null);
      setCode("");
      setPassword("");
      setList(await client.factors.list());
    });
  };
  const addKey = () =>
    void act.run(async () => {
      const { startRegistration } = await import("@simplewebauthn/browser");
      const enrol = (options: { rp?: { id?: string } }) => {
        // Where the key cannot work, say where it can, rather than pass on the browser's refusal.
        const problem = securityKeyAddressProblem(location, options.rp?.id);
        if (problem) throw new InputError(problem);
        return startRegistration({ optionsJSON: options as never });
      };
      shown(await client.factors.enrolWebauthn(name || "Security key", enrol, password));
      setPassword("");
      setList(await client.factors.list());
    });
  // Every change asks for the password (an unattended session must not bind someone else's factor); it is not kept after.
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
  return { list, totp, code, setCode, name, setName, password, setPassword, codes, act, startTotp, confirmTotp, addKey, remove, newCodes };
}

interface TotpSetup {
  secret: string;
  uri: string;
  setupToken: string;
}

function FactorList({ factors, removable, onRemove }: { factors: FactorInfo[]; removable: boolean; onRemove(f: FactorInfo): void }) {
  return (
    <ul data-testid="factor-list">
      {factors.map((f) => (
        <li key={f.factorId}>
          {f.kind === "totp" ? "Authenticator app" : "Security key"}: <strong>{f.name}</strong> (added {when(f.createdAt)}
          {f.lastUsedAt ? `, last used ${when(f.lastUsedAt)}` : ""}){" "}
          <button type="button" class="secondary" disabled={!removable} onClick={() => onRemove(f)}>
            Remove
          </button>
        </li>
      ))}
      {factors.length === 0 && <li>None yet.</li>}
    </ul>
  );
}

/** An authenticator app being added: the secret to scan or type, and the first code it shows. */
function TotpEnrolment(props: { totp: TotpSetup; code: string; busy: boolean; onCode(code: string): void; onSubmit(e: Event): void }) {
  return (
    <form onSubmit={props.onSubmit}>
      <p>Scan this QR code with your authenticator app, or type in the address or the secret below it, then type the code the app shows:</p>
      <QrCode text={props.totp.uri} label="QR code for your authenticator app" />
      <p>
        <code data-testid="totp-uri">{props.totp.uri}</code>
        <br />
        Secret: <code data-testid="totp-secret">{props.totp.secret}</code>
      </p>
      <Field id="totp-code" label="Code from the app">
        <input id="totp-code" autocomplete="one-time-code" required value={props.code} onInput={(e) => props.onCode(inputValue(e))} />
      </Field>
      <Submit busy={props.busy}>Enrol the app</Submit>
    </form>
  );
}

function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
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
  );
}
