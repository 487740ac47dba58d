/** The trash of every vault, one after another: what members deleted, until it is purged. */
import { currentClient, go, useRefresh } from "../session";
import { useLibrary } from "../library";
import { Busy } from "../components/ui";
import { Trash } from "./vault/trash";

export function AllTrash() {
  const lib = useLibrary(currentClient(), useRefresh());
  return (
    <main>
      <h1>Trash</h1>
      <p class="meta">Deleted items stay in their vault's trash until they are purged; restore one to put it back in its vault.</p>
      {!lib.vaults && <Busy label="Reading your vaults…" />}
      {(lib.vaults ?? []).map((v) => (
        <Trash
          key={v.vaultId}
          vaultId={v.vaultId}
          version={lib.items.get(v.vaultId)}
          title={`Trash of ${v.nameCheck.name}`}
          onRestored={(i) => go(`#/vault/${v.vaultId}/${i.itemId}`)}
        />
      ))}
    </main>
  );
}
