/** The vault's trash: what members deleted, until it is purged; each item restored or deleted for good, its files downloaded. */
import { useEffect, useState } from "preact/hooks";
import type { Item, TrashedItem } from "../../../../sdk";
import { currentClient } from "../../session";
import { ErrorNote, useAction, type Action } from "../../components/ui";
import { FileList } from "./files-lazy";

/** `version` changes when the vault's items do: the trash is read again then. `title` names it where several vaults' show. */
export function Trash({
  vaultId,
  version,
  onRestored,
  title = "Trash",
}: {
  vaultId: string;
  version: unknown;
  onRestored(item: Item): void;
  title?: string;
}) {
  const client = currentClient();
  const [trash, setTrash] = useState<TrashedItem[]>([]);
  const load = useAction();
  const act = useAction();
  const reload = () => load.run(async () => setTrash(await client.items.trash(vaultId)));
  // An item the signed history cannot vouch for comes back only when the person says so.
  const restore = async (t: TrashedItem): Promise<Item> => {
    if (t.verified) return client.items.restore(vaultId, t.itemId);
    if (
      !confirm(
        `"${t.name}" was deleted before the signed history this browser checked: the server's copy cannot be checked. Restore it anyway?`,
      )
    )
      throw new Error("Not restored.");
    return client.items.restore(vaultId, t.itemId, { unverified: true });
  };
  const purge = async (t: TrashedItem) => {
    await client.items.purge(vaultId, t.itemId);
    await reload();
  };
  useEffect(() => void reload(), [vaultId, version]);
  return (
    <section aria-labelledby={`trash-heading-${vaultId}`}>
      <h2 id={`trash-heading-${vaultId}`}>{title}</h2>
      <ErrorNote error={load.error} />
      <ErrorNote error={act.error} />
      {trash.length === 0 ? (
        <p>The trash is empty.</p>
      ) : (
        <ul class="list" aria-label={title}>
          {trash.map((t) => (
            <TrashRow key={t.itemId} item={t} act={act} onRestore={async () => onRestored(await restore(t))} onPurge={() => purge(t)} />
          ))}
        </ul>
      )}
    </section>
  );
}

function TrashRow({
  item: t,
  act,
  onRestore,
  onPurge,
}: {
  item: TrashedItem;
  act: Action;
  onRestore(): Promise<void>;
  onPurge(): Promise<void>;
}) {
  return (
    <li>
      <span>{t.name}</span>{" "}
      <span class="meta">
        deleted {new Date(t.deletedAt).toLocaleString()}
        {t.verified ? "" : " · deleted before the history this browser verified"}
      </span>{" "}
      <button type="button" class="secondary" disabled={act.busy} onClick={() => void act.run(onRestore)}>
        Restore {t.name}
      </button>{" "}
      <button
        type="button"
        class="danger"
        disabled={act.busy}
        onClick={() => {
          if (confirm(`Delete "${t.name}" for good, with its history? This cannot be undone.`)) void act.run(onPurge);
        }}
      >
        Delete {t.name} for good
      </button>
      <FileList vaultId={t.vaultId} files={t.attachments} label={`Files of ${t.name}`} />
    </li>
  );
}
