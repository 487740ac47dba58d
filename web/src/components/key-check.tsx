/**
 * A colleague's key as this browser holds it: its fingerprint, whether this device checked it
 * (compared in person, or vouched for by an invite link this browser made), and until then the
 * comparison that marks it checked (CompareKey: the rule of `vaultctl trust`, a typed fingerprint
 * that differs pins nothing). Shown in the colleagues' list of "Your key" and on People.
 */
import { useEffect, useState } from "preact/hooks";
import { bundleFingerprint, sentence, type CheckedMember, type VaultClient } from "../../../sdk";
import { CompareKey } from "./compare-key";

const TRUST_TEXT: Record<string, string> = {
  checked: "checked: you compared it",
  invite: "checked: vouched for by the invite link you sent",
  "first-use": "not compared: the key first seen here",
};

export function KeyCheck({ client, person, onChecked }: { client: VaultClient; person: CheckedMember; onChecked(): void }) {
  const fingerprint = useFingerprint(person);
  const checked = !person.problem && (person.trust === "checked" || person.trust === "invite");
  return (
    <>
      <p class="meta">
        Key fingerprint <code data-testid={`fingerprint-${person.email}`}>{fingerprint ?? "…"}</code>
      </p>
      <p class={person.problem ? "danger-text" : "meta"} data-testid={`trust-${person.email}`}>
        {person.problem ? sentence(person.problem) : (TRUST_TEXT[person.trust ?? ""] ?? "not compared yet")}
      </p>
      {!checked && <CompareKey client={client} userId={person.userId} email={person.email} onChecked={onChecked} />}
    </>
  );
}

/** The fingerprint of the keys listed for `person` (the one `client.keys.fingerprint` gives as `current`), once computed. */
function useFingerprint(person: CheckedMember): string | null {
  const [fingerprint, setFingerprint] = useState<string | null>(null);
  useEffect(() => {
    let shown = true;
    void bundleFingerprint(person).then((f) => shown && setFingerprint(f));
    return () => {
      shown = false;
    };
  }, [person.publicKey, person.signingPublicKey]);
  return fingerprint;
}
