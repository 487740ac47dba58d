/**
 * Marking a colleague's key as checked, as `vaultctl trust` does: the person types the fingerprint
 * the colleague reads to them from their own "Your key" page (in person or by phone), and only a
 * fingerprint equal to the one the server shows now is pinned as checked. A typed mismatch pins
 * nothing and says so; the server's fingerprint is never taken on its word.
 */
import { useState } from "preact/hooks";
import { InputError, type VaultClient } from "../../../sdk";
import { sameFingerprint } from "../../../sdk/fingerprints";
import { ErrorNote, inputValue, useAction } from "./ui";

export function CompareKey(props: { client: VaultClient; userId: string; email: string; onChecked(): void }) {
  const [typed, setTyped] = useState("");
  const act = useAction();
  const id = `compare-${props.userId}`;
  const check = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const { current } = await props.client.keys.fingerprint(props.userId);
      if (!sameFingerprint(typed, current))
        throw new InputError(
          `That is not the fingerprint the server shows for ${props.email}. Do not mark their key as checked: compare again, in person or by phone.`,
        );
      await props.client.keys.trust(props.userId, current, props.email);
      props.onChecked();
    });
  };
  return (
    <form class="inline" onSubmit={check}>
      <label for={id}>Fingerprint {props.email} reads to you</label>
      <input id={id} value={typed} autocomplete="off" spellcheck={false} onInput={(e) => setTyped(inputValue(e))} />
      <button type="submit" disabled={act.busy || typed.trim() === ""}>
        Mark {props.email} as checked
      </button>
      <ErrorNote error={act.error} />
    </form>
  );
}
