/** Adopting a vault without a signed roster: the owner confirms each member, then a new key for them. */
import { useEffect, useState } from "preact/hooks";
import { mayDo, type MemberEntry, type RekeyProgress, type Vault } from "../../../../sdk";
import { currentClient } from "../../session";
import { ErrorNote, useAction } from "../../components/ui";
import { PHASES } from "../../components/rekey-phases";

/**
 * A vault without a signed member history: the owner says who should hold it; anyone unchecked is
 * removed, then a new key is made for those kept alone (the SDK's adoptRoster, a rekey).
 */
export function Adopt(props: { vault: Vault; members: MemberEntry[]; email(id: string): string; me: string; onAdopted(): void }) {
  const client = currentClient();
  // Nobody but the owner is checked to begin with: each member kept is one the owner vouches for.
  const [keep, setKeep] = useState<Set<string>>(() => new Set([props.me]));
  const [progress, setProgress] = useState<RekeyProgress | null>(null);
  const action = useAction();
  useEffect(() => setKeep(new Set([props.me])), [props.members]);
  if (!mayDo(props.vault.role, "adoptRoster"))
    return (
      <div class="warning" role="alert" data-testid="unsigned-vault">
        <p>
          This vault has no signed member history: its member list is only the server's word. Nothing can be added to it or shared until an
          owner adopts it.
        </p>
      </div>
    );
  const adopt = () =>
    action.run(async () => {
      for (const m of props.members) if (!keep.has(m.userId)) await client.members.remove(props.vault.vaultId, m.userId);
      try {
        // The name shown above is the one the owner confirms: the adopt link signs it.
        // The members and roles shown are the ones the owner confirms: a list the server changes by then is refused.
        const members = props.members.filter((m) => keep.has(m.userId)).map((m) => ({ userId: m.userId, role: m.role }));
        await client.members.adoptRoster(props.vault.vaultId, { members, name: props.vault.vaultName }, { onProgress: setProgress });
      } finally {
        setProgress(null);
      }
      props.onAdopted();
    });
  return (
    <div class="warning" role="region" aria-label="Adopt this vault" data-testid="unsigned-vault">
      <p>
        This vault has no signed member history: its member list is only the server's word, and nothing can be added to it or shared until
        you adopt it. Check each person who should hold it, in the role shown: a new key is made for them alone, and everyone unchecked is
        removed. Adopting also signs its name, <strong>{props.vault.vaultName}</strong>: rename it first if that is not its name.
      </p>
      <KeepList members={props.members} keep={keep} me={props.me} email={props.email} onChange={setKeep} />
      <button type="button" onClick={() => void adopt()} disabled={action.busy}>
        Adopt: new key for the checked members
      </button>
      {progress && (
        <p role="status">
          {PHASES[progress.phase]}: {progress.done} of {progress.total}
        </p>
      )}
      <ErrorNote error={action.error} />
    </div>
  );
}

/** The members, a box each: checked, kept; the owner adopting is kept whatever happens. */
function KeepList(props: {
  members: MemberEntry[];
  keep: Set<string>;
  me: string;
  email(id: string): string;
  onChange(keep: Set<string>): void;
}) {
  const { keep } = props;
  return (
    <ul class="list">
      {props.members.map((m) => (
        <li key={m.userId}>
          <label>
            <input
              type="checkbox"
              checked={keep.has(m.userId)}
              disabled={m.userId === props.me}
              onChange={(e) => {
                const next = new Set(keep);
                if ((e.target as HTMLInputElement).checked) next.add(m.userId);
                else next.delete(m.userId);
                props.onChange(next);
              }}
            />{" "}
            {props.email(m.userId)} ({m.role})
          </label>
        </li>
      ))}
    </ul>
  );
}
