/** The vault list: each vault with its name as its signed roster vouches for it. */
import { useEffect, useState } from "preact/hooks";
import { VaultListChanged, type CheckedVault, type MissingVault, type VaultType } from "../../../sdk";
import { currentClient, go, useRefresh } from "../session";
import { Busy, Choice, ErrorNote, Field, inputValue, useAction, Submit } from "../components/ui";
import { SearchAllItems } from "../components/item-search";
import { NameFlag } from "../components/name-flag";

/** What a new vault can be, in words. */
const KIND_CHOICES = [["shared", "Shared (can add members)"] as const, ["personal", "Personal (only you)"] as const];

export function Vaults() {
  const client = currentClient();
  const [query, setQuery] = useState("");
  const { vaults, missing, load, reload } = useVaultList();
  const confirmGone = useAction();

  const wanted = query.trim().toLowerCase();
  const shown = (vaults ?? []).filter((v) => v.nameCheck.name.toLowerCase().includes(wanted));

  return (
    <main>
      <h1>Your vaults</h1>
      {vaults && vaults.length > 0 && <SearchAllItems vaults={vaults} />}
      <Field id="vault-search" label="Search vaults">
        <input id="vault-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
      </Field>
      {load.busy && <Busy label="Loading your vaults…" />}
      <ErrorNote error={load.error} />
      {missing && (
        <MissingVaults
          changed={missing}
          busy={confirmGone.busy}
          onConfirm={() =>
            void confirmGone.run(async () => {
              await client.vaults.forget(missing.missing.map((m) => m.vaultId));
              await reload();
            })
          }
        />
      )}
      <ErrorNote error={confirmGone.error} />
      {vaults && shown.length === 0 && <p>{vaults.length === 0 ? "No vaults yet: create one below." : "No vault matches your search."}</p>}
      <VaultList shown={shown} />
      <NewVault />
    </main>
  );
}

/** The vaults shown, each with its name as its signed roster vouches for it. */
function VaultList({ shown }: { shown: CheckedVault[] }) {
  return (
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
  );
}

/** The form that creates a vault and opens it. */
function NewVault() {
  const client = currentClient();
  const [name, setName] = useState("");
  const [type, setType] = useState<VaultType>("shared");
  const create = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void create.run(async () => {
      const vault = await client.vaults.create(name, type);
      go(`#/vault/${vault.vaultId}`);
    });
  };
  return (
    <>
      <h2>New vault</h2>
      <form onSubmit={submit} class="inline">
        <Field id="new-vault-name" label="Name">
          <input id="new-vault-name" required maxLength={256} value={name} onInput={(e) => setName(inputValue(e))} />
        </Field>
        <Choice id="new-vault-type" label="Kind" value={type} options={KIND_CHOICES} onChange={setType} />
        <Submit busy={create.busy}>Create vault</Submit>
      </form>
      <ErrorNote error={create.error} />
    </>
  );
}

/**
 * The vault list, read again on every refresh. Known vaults the server's listing left out
 * (`missing`): the list is shown, but not taken as complete until the person confirms they are gone.
 */
function useVaultList() {
  const client = currentClient();
  const [vaults, setVaults] = useState<CheckedVault[] | null>(null);
  const [missing, setMissing] = useState<VaultListChanged | null>(null);
  const load = useAction();
  const refresh = useRefresh();
  const reload = () =>
    load.run(async () => {
      try {
        setVaults(await client.vaults.listChecked());
        setMissing(null);
      } catch (err) {
        if (!(err instanceof VaultListChanged)) throw err;
        setMissing(err);
        setVaults(err.listed);
      }
    });
  useEffect(() => void reload(), [refresh]);
  return { vaults, missing, load, reload };
}

/** Vaults this browser knew that the server no longer lists: said, and forgotten only when the person confirms. */
function MissingVaults({ changed, busy, onConfirm }: { changed: VaultListChanged; busy: boolean; onConfirm(): void }) {
  const named = (m: MissingVault) => (m.name ? `"${m.name}"` : m.vaultId);
  return (
    <section class="card warning" role="alert" aria-label="Vaults no longer listed">
      <p>
        {changed.code === "NAME_MOVED"
          ? "The server gives the name of a vault you knew to another vault, and no longer lists the one you knew:"
          : "The server no longer lists these vaults, which this browser knew:"}
      </p>
      <ul>
        {changed.missing.map((m) => (
          <li key={m.vaultId}>
            {named(m)} <span class="meta">{m.vaultId}</span>
          </li>
        ))}
      </ul>
      {changed.moved.map((m) => (
        <p key={m.nowId}>
          "{m.name}" now names vault {m.nowId}
          {m.takenFromYours ? ", whose name someone else signed; the vault you made under that name is the one you knew" : ""}.
        </p>
      ))}
      <p>
        A vault is gone when it was deleted or you were removed from it; a server can also hide one. Until you confirm, names this browser
        knew for them are not taken for other vaults.
      </p>
      <button
        type="button"
        class="danger"
        disabled={busy}
        onClick={() => {
          if (confirm(`Forget ${changed.missing.map(named).join(", ")} in this browser? Only if you know why it is gone.`)) onConfirm();
        }}
      >
        They are gone: forget them
      </button>
    </section>
  );
}
