/**
 * The inputs of the policies form, each with its meaning, its bounds (the browser checks them before
 * the server does), and who enforces it: the server, or only apps.
 */
import { Field, inputValue } from "../../components/ui";
import { DURATION_PATTERN, POLICY_BOUNDS, type PolicyForm } from "./policy-form";

type Edit = (next: Partial<PolicyForm>) => void;
type NumberKey = "argon2idMemoryKiB" | "argon2idIterations" | "pbkdf2Iterations" | "recoveryMinThreshold" | "idleLockMinutes";

const SCORES = [
  ["0", "0 of 4: any password"],
  ["1", "1 of 4"],
  ["2", "2 of 4"],
  ["3", "3 of 4"],
  ["4", "4 of 4: very hard to guess"],
] as const;

/** The passkey sign-in policy's choices, as the form and the members' table say them. */
export const PASSKEY_CHOICES = [
  ["allowed", "Allowed"],
  ["forbidden", "Forbidden"],
  ["required", "Required of members who have one"],
] as const;

export function PolicyFields({ form, edit }: { form: PolicyForm; edit: Edit }) {
  return (
    <>
      <div class="field">
        <label>
          <input
            type="checkbox"
            id="policy-2fa"
            aria-describedby="policy-2fa-hint"
            checked={form.requireSecondFactor}
            onChange={(e) => edit({ requireSecondFactor: (e.currentTarget as HTMLInputElement).checked })}
          />{" "}
          Require a second factor
        </label>
        <small id="policy-2fa-hint">
          Enforced by the server. A member without a second factor can only enrol one, on this page, until they have; turning this on
          narrows their sessions at their next request.
        </small>
      </div>
      <PasskeyField form={form} edit={edit} />
      <KdfFields form={form} edit={edit} />
      <Field
        id="policy-invite-max"
        label="Longest invite"
        hint="Enforced by the server. A number and s, m, h or d (72h, 7d), at most 30d; empty: 30d. Below 15m invites expire before people can redeem them."
      >
        <input
          id="policy-invite-max"
          aria-describedby="policy-invite-max-hint"
          pattern={DURATION_PATTERN}
          placeholder="30d"
          value={form.inviteMaxLifetime}
          onInput={(e) => edit({ inviteMaxLifetime: inputValue(e) })}
        />
      </Field>
      <NumberField
        name="recoveryMinThreshold"
        label="Fewest recovery trustees"
        hint="Enforced by the server. The fewest trustees (k) an account recovery may need, 2 to 10: members need at least that many other owners and admins to enrol."
        required
        form={form}
        edit={edit}
      />
      <ClientOnlyFields form={form} edit={edit} />
    </>
  );
}

/** Whether members may, or must, sign in with a passkey (sdk/client/passkey-logins.ts). */
function PasskeyField({ form, edit }: { form: PolicyForm; edit: Edit }) {
  return (
    <Field
      id="policy-passkeys"
      label="Signing in with a passkey"
      hint="Enforced by the server. Forbidden: no passkey is added or signs in (those kept wait, unused). Required: a member who has a passkey signs in with it, not with the master password alone; one who has none signs in with the password to add one."
    >
      <select
        id="policy-passkeys"
        aria-describedby="policy-passkeys-hint"
        value={form.passkeySignIn}
        onChange={(e) => edit({ passkeySignIn: inputValue(e) as PolicyForm["passkeySignIn"] })}
      >
        {PASSKEY_CHOICES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </Field>
  );
}

function KdfFields({ form, edit }: { form: PolicyForm; edit: Edit }) {
  const b = POLICY_BOUNDS;
  return (
    <fieldset aria-describedby="policy-kdf-hint">
      <legend>Least protection of a new master password (KDF)</legend>
      <small id="policy-kdf-hint">
        Enforced by the server when someone registers by invite, changes or recovers a master password; passwords already set are not
        touched. A new password meets it with Argon2id of at least this memory and passes, or PBKDF2 of at least these iterations. Empty:
        the server&apos;s floor.
      </small>
      <NumberField
        name="argon2idMemoryKiB"
        label="Argon2id memory (KiB)"
        hint={`${b.argon2idMemoryKiB.min} to ${b.argon2idMemoryKiB.max} (1 GiB)`}
        form={form}
        edit={edit}
      />
      <NumberField
        name="argon2idIterations"
        label="Argon2id passes"
        hint={`${b.argon2idIterations.min} to ${b.argon2idIterations.max}`}
        form={form}
        edit={edit}
      />
      <NumberField
        name="pbkdf2Iterations"
        label="PBKDF2 iterations"
        hint={`${b.pbkdf2Iterations.min} to ${b.pbkdf2Iterations.max}`}
        form={form}
        edit={edit}
      />
    </fieldset>
  );
}

/** The rules the server stores and cannot check: said as such, with what this web vault does whatever they say. */
function ClientOnlyFields({ form, edit }: { form: PolicyForm; edit: Edit }) {
  return (
    <fieldset aria-describedby="policy-apps-hint">
      <legend>Applied by apps only</legend>
      <small id="policy-apps-hint">
        The server stores these for apps to apply and cannot check them: a modified app need not. This web vault asks for a master password
        of strength 3 of 4 and locks after 5 minutes without input, whatever they say.
      </small>
      <Field id="policy-score" label="Least password strength" hint="zxcvbn's score of a master password, 0 to 4.">
        <select
          id="policy-score"
          aria-describedby="policy-score-hint"
          value={form.minPasswordScore}
          onChange={(e) => edit({ minPasswordScore: inputValue(e) })}
        >
          {SCORES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      <NumberField
        name="idleLockMinutes"
        label="Idle lock (minutes)"
        hint={`Lock an app after this long without input, ${POLICY_BOUNDS.idleLockMinutes.min} to ${POLICY_BOUNDS.idleLockMinutes.max}; empty: none.`}
        form={form}
        edit={edit}
      />
    </fieldset>
  );
}

function NumberField(props: { name: NumberKey; label: string; hint: string; required?: boolean; form: PolicyForm; edit: Edit }) {
  const id = `policy-${props.name}`;
  const bounds = POLICY_BOUNDS[props.name];
  return (
    <Field id={id} label={props.label} hint={props.hint}>
      <input
        id={id}
        type="number"
        inputMode="numeric"
        step={1}
        min={bounds.min}
        max={bounds.max}
        required={props.required}
        aria-describedby={`${id}-hint`}
        value={props.form[props.name]}
        onInput={(e) => props.edit({ [props.name]: inputValue(e) })}
      />
    </Field>
  );
}
