/**
 * One vault's page: its items, members, sharing, rekey, fingerprint and signed member history. The
 * state is `useVault`'s; each part below is one thing the user does here, top to bottom.
 */
import { ErrorNote, Busy } from "../../components/ui";
import { useVault } from "./use-vault";
import { VaultHeading } from "./heading";
import { Adopt } from "./adopt";
import { RekeyProgressBar, RekeyWarning } from "./rekey";
import { ItemsSection } from "./items";
import { Trash } from "./trash";
import { Transfer } from "./transfer";
import { MembersSection } from "./members";
import { Exposure } from "./exposure";
import { MemberHistory } from "./member-history";
import { VaultSettings } from "./settings";

export function VaultPage({ vaultId, itemId }: { vaultId: string; itemId?: string }) {
  const state = useVault(vaultId, itemId);
  const { vault, load, act, email, reload, setOpen } = state;
  if (!vault) {
    return (
      <main>
        <h1>Vault</h1>
        {load.busy && <Busy label="Opening the vault…" />}
        <ErrorNote error={load.error} />
        <p>
          <a href="#/vaults">Back to your vaults</a>
        </p>
      </main>
    );
  }
  return (
    <main>
      <VaultHeading vault={vault} signed={state.roster !== null} fingerprint={state.fingerprint} />
      {!state.roster && (
        <Adopt
          vault={vault}
          members={state.members}
          email={email}
          me={state.me}
          onAdopted={() => {
            state.setNotice("The vault has a signed member history now, and a new key for the members you kept.");
            void reload();
          }}
        />
      )}
      <ErrorNote error={load.error} />
      <ErrorNote error={act.error} />
      {state.notice && (
        <p class="note" role="status">
          {state.notice}
        </p>
      )}
      {vault.rekeyRequired && <RekeyWarning state={state} />}
      {state.progress && <RekeyProgressBar progress={state.progress} />}

      <ItemsSection state={state} />
      <Trash vaultId={vaultId} version={state.items} onRestored={(i) => void reload().then(() => setOpen(i.itemId))} />
      <Transfer vaultId={vaultId} vaultName={vault.nameCheck.name} onImported={() => void reload()} />
      {vault.vaultType === "shared" && <MembersSection state={state} vault={vault} />}
      {state.exposureFor && <Exposure vaultId={vaultId} userId={state.exposureFor} who={email(state.exposureFor)} version={state.items} />}
      <MemberHistory roster={state.roster} me={state.me} email={email} onExposure={state.setExposureFor} />

      {state.may("rename") && <VaultSettings vault={vault} onRenamed={() => void reload()} />}
    </main>
  );
}
