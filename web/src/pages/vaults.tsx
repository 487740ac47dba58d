/** The vault list: each vault with its name as its signed roster vouches for it. */
import { useEffect, useState } from "preact/hooks";
import type { CheckedVault, VaultType } from "../../../sdk";
import { currentClient, go, useRefresh } from "../session";
import { Busy, Choice, ErrorNote, Field, inputValue, useAction, Submit } from "../components/ui";
import { SearchAllItems } from "../components/item-search";
import { NameFlag } from "../components/name-flag";

/** What a new vault can be, in words. */
const KIND_CHOICES = [["shared", "Shared (can add members)"] as const, ["personal", "Personal (only you)"] as const];

export function Vaults() {
  const client = currentClient();
  const [vaults, setVaults] = useState<CheckedVault[] | null>(null);
  const [query, setQuery] = useState("");
  const [name, setName] = useState("");
  const [type, setType] = useState<VaultType>("shared");
  const load = useAction();
  const create = useAction();
  const refresh = useRefresh();
  useEffect(() => void load.run(async () => setVaults(await client.vaults.listChecked())), [refresh]);

  const wanted = query.trim().toLowerCase();
  const shown = (vaults ?? []).filter((v) => v.nameCheck.name.toLowerCase().includes(wanted));
  const submit = (e: Event) => {
    e.preventDefault();
    void create.run(async () => {
      const vault = await client.vaults.create(name, type);
      go(`#/vault/${vault.vaultId}`);
    });
  };

  return (
    <main>
      <h1>Your vaults</h1>
      {vaults && vaults.length > 0 && <SearchAllItems vaults={vaults} />}
      <Field id="vault-search" label="Search vaults">
        <input id="vault-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
      </Field>
      {load.busy && <Busy label="Loading your vaults…" />}
      <ErrorNote error={load.error} />
      {vaults && shown.length === 0 && <p>{vaults.length === 0 ? "No vaults yet: create one below." : "No vault matches your search."}</p>}
      <ul class="list" aria-label="Vaults">
        {shown.map((v) => (
          <li key={v.vaultId}>
            <a href={`#/vault/${v.vaultId}`}>{v.nameCheck.name}</a> <NameFlag check={v.nameCheck} />
            <span class="meta">
              {v.vaultType} · {v.role}
              {v.rekeyRequired ? " · rekey required" : ""}
            </span>
          </li>
        ))}
      </ul>
      <h2>New vault</h2>
      <form onSubmit={submit} class="inline">
        <Field id="new-vault-name" label="Name">
          <input id="new-vault-name" required maxLength={256} value={name} onInput={(e) => setName(inputValue(e))} />
        </Field>
        <Choice id="new-vault-type" label="Kind" value={type} options={KIND_CHOICES} onChange={setType} />
        <Submit busy={create.busy}>Create vault</Submit>
      </form>
      <ErrorNote error={create.error} />
    </main>
  );
}
