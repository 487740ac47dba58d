/** What a vault keeps of its items' past: an item's revisions (one made current again) and the vault's trash (restore, delete for good). */
import { useEffect, useState } from "preact/hooks";
import type { Item, ItemRevision, TrashedItem } from "../../../../sdk";
import { currentClient } from "../../session";
import { Busy, ErrorNote, useAction } from "../../ui";

/** An item's kept revisions, read when asked for; "Restore this version" makes one current again. */
export function ItemHistory({ vaultId, item, onRestored }: { vaultId: string; item: Item; onRestored(item: Item): void }) {
  const client = currentClient();
  const [revisions, setRevisions] = useState<ItemRevision[] | null>(null);
  const load = useAction();
  const act = useAction();
  useEffect(() => setRevisions(null), [item.itemId, item.revision]);
  const show = () => load.run(async () => setRevisions(await client.itemHistory(vaultId, item.itemId)));
  if (revisions === null)
    return (
      <p>
        <button type="button" class="secondary" onClick={() => void show()} disabled={load.busy}>
          Show history
        </button>
        {load.busy && <Busy label="Reading the item's history…" />}
        <ErrorNote error={load.error} />
      </p>
    );
  return (
    <section aria-label={`History of ${item.name}`} class="card">
      <h4>Earlier versions</h4>
      {revisions.length === 0 && <p>No earlier versions are kept.</p>}
      <ol class="history">
        {revisions.map((r) => (
          <li key={r.revision} data-testid={`revision-${r.revision}`}>
            Revision {r.revision} · {r.name} · replaced {new Date(r.replacedAt).toLocaleString()}
            {r.verified ? "" : " · not covered by the history this browser verified"}
            {r.fields.password !== undefined && (
              <span class="meta"> · password {r.fields.password === item.fields.password ? "as now" : "different"}</span>
            )}{" "}
            <button
              type="button"
              class="secondary"
              disabled={act.busy}
              onClick={() =>
                void act.run(async () => {
                  // Exactly what is shown here, or a refusal: the server cannot swap in another version meanwhile.
                  const restored = await client.restoreRevision(vaultId, item.itemId, r.revision, r);
                  onRestored(restored);
                })
              }
            >
              Restore revision {r.revision}
            </button>
          </li>
        ))}
      </ol>
      <ErrorNote error={act.error} />
    </section>
  );
}

/** The vault's trash: what members deleted, until it is purged. */
export function Trash({ vaultId, version, onRestored }: { vaultId: string; version: unknown; onRestored(item: Item): void }) {
  const client = currentClient();
  const [trash, setTrash] = useState<TrashedItem[]>([]);
  const load = useAction();
  const act = useAction();
  const reload = () => load.run(async () => setTrash(await client.trash(vaultId)));
  // An item the signed history cannot vouch for comes back only when the person says so.
  const restore = async (t: TrashedItem): Promise<Item> => {
    if (t.verified) return client.restoreItem(vaultId, t.itemId);
    if (
      !confirm(
        `"${t.name}" was deleted before the signed history this browser checked: the server's copy cannot be checked. Restore it anyway?`,
      )
    )
      throw new Error("Not restored.");
    return client.restoreItem(vaultId, t.itemId, { unverified: true });
  };
  useEffect(() => void reload(), [vaultId, version]);
  return (
    <section aria-labelledby="trash-heading">
      <h2 id="trash-heading">Trash</h2>
      <ErrorNote error={load.error} />
      <ErrorNote error={act.error} />
      {trash.length === 0 ? (
        <p>The trash is empty.</p>
      ) : (
        <ul class="list" aria-label="Trash">
          {trash.map((t) => (
            <li key={t.itemId}>
              <span>{t.name}</span>{" "}
              <span class="meta">
                deleted {new Date(t.deletedAt).toLocaleString()}
                {t.verified ? "" : " · deleted before the history this browser verified"}
              </span>{" "}
              <button
                type="button"
                class="secondary"
                disabled={act.busy}
                onClick={() => void act.run(async () => onRestored(await restore(t)))}
              >
                Restore {t.name}
              </button>{" "}
              <button
                type="button"
                class="danger"
                disabled={act.busy}
                onClick={() => {
                  if (confirm(`Delete "${t.name}" for good, with its history? This cannot be undone.`))
                    void act.run(async () => {
                      await client.purgeItem(vaultId, t.itemId);
                      await reload();
                    });
                }}
              >
                Delete {t.name} for good
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
