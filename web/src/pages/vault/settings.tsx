/** A vault's settings: rename, and delete. */
import { useState } from "preact/hooks";
import { mayDo, type Vault } from "../../../../sdk";
import { currentClient, go } from "../../session";
import { ErrorNote, Field, inputValue, useAction, Submit } from "../../components/ui";

export function VaultSettings({ vault, onRenamed }: { vault: Vault; onRenamed(): void }) {
  const client = currentClient();
  const [name, setName] = useState(vault.vaultName);
  const action = useAction();
  return (
    <section aria-labelledby="settings-heading">
      <h2 id="settings-heading">Vault settings</h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await client.vaults.rename(vault.vaultId, name);
            onRenamed();
          });
        }}
      >
        <Field id="rename-vault" label="Vault name">
          <input id="rename-vault" required maxLength={256} value={name} onInput={(e) => setName(inputValue(e))} />
        </Field>
        <Submit busy={action.busy}>Rename</Submit>
      </form>
      {mayDo(vault.role, "delete") && (
        <button
          type="button"
          class="danger"
          onClick={() => {
            if (confirm(`Delete "${vault.vaultName}" and all its items for every member? This cannot be undone.`)) {
              void action.run(async () => {
                await client.vaults.delete(vault.vaultId);
                go("#/vaults");
              });
            }
          }}
        >
          Delete this vault
        </button>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}
