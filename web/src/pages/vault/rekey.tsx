/** Rekeying a vault: the warning while a removed member still holds its key, and the rekey's progress. */
import type { RekeyProgress } from "../../../../sdk";
import { PHASES } from "../../components/rekey-phases";
import type { VaultState } from "./use-vault";

/** A member was removed and the vault still has the key they hold: the way to a new one. */
export function RekeyWarning({ state }: { state: VaultState }) {
  const { act } = state;
  return (
    <div class="warning" role="alert">
      <p>A member was removed and still holds the old key. Rekey the vault so that they cannot read anything in it.</p>
      {state.may("rekey") && (
        <button type="button" onClick={() => void state.rekey()} disabled={act.busy}>
          {act.error ? "Try the rekey again" : "Rekey now"}
        </button>
      )}
    </div>
  );
}

export function RekeyProgressBar({ progress }: { progress: RekeyProgress }) {
  return (
    <div class="progress" role="status">
      <label for="rekey-progress">
        {PHASES[progress.phase]}: {progress.done} of {progress.total}
      </label>
      <progress id="rekey-progress" max={Math.max(progress.total, 1)} value={progress.done} />
    </div>
  );
}
