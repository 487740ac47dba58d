/**
 * A login's passkeys, shown by their site and account (never the private key, which only signs):
 * rows of the item's view, and the list in its form, where one can be removed. A passkey's key
 * is sealed with the rest of the item: everyone who may open the item may sign in with it.
 */
import type { Passkey } from "../../../sdk/passkeys/passkey";

const made = (p: Passkey) => new Date(p.createdAt).toLocaleDateString();
const account = (p: Passkey) => p.userName || p.userDisplayName || "an account";

export function PasskeyRows({ passkeys }: { passkeys: readonly Passkey[] }) {
  return (
    <>
      {passkeys.map((p, n) => (
        <div key={p.credentialId}>
          <dt>{n === 0 ? "passkey" : `passkey ${n + 1}`}</dt>
          <dd>
            {account(p)} at <strong>{p.rpId}</strong>{" "}
            <span class="meta">
              · made {made(p)} · {p.counter === 1 ? "used once" : `used ${p.counter} times`}
            </span>
          </dd>
        </div>
      ))}
    </>
  );
}

/** The form's list: each passkey with a Remove button (the site keeps its public key until the account there forgets it). */
export function PasskeyList({ passkeys, onChange }: { passkeys: readonly Passkey[]; onChange(next: Passkey[]): void }) {
  if (passkeys.length === 0) return null;
  return (
    <fieldset>
      <legend>Passkeys</legend>
      <ul class="list">
        {passkeys.map((p) => (
          <li key={p.credentialId}>
            {account(p)} at <strong>{p.rpId}</strong> <span class="meta">· made {made(p)}</span>{" "}
            <button
              type="button"
              class="secondary"
              aria-label={`Remove the passkey for ${account(p)} at ${p.rpId}`}
              onClick={() => onChange(passkeys.filter((q) => q !== p))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <p class="hint">A passkey belongs to a login: saving this item as another type removes them.</p>
    </fieldset>
  );
}
