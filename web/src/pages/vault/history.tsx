/** What a vault keeps of an item's past: its revisions with their files, one made current again. */
import { useEffect, useState } from "preact/hooks";
import type { Item, ItemRevision } from "../../../../sdk";
import { currentClient } from "../../session";
import { Busy, ErrorNote, useAction } from "../../components/ui";
import { FileList } from "./files-lazy";

/** An item's kept revisions, read when asked for; "Restore this version" makes one current again. */
export function ItemHistory({ vaultId, item, onRestored }: { vaultId: string; item: Item; onRestored(item: Item): void }) {
  const client = currentClient();
  const [revisions, setRevisions] = useState<ItemRevision[] | null>(null);
  const load = useAction();
  const act = useAction();
  useEffect(() => setRevisions(null), [item.itemId, item.revision]);
  const show = () => load.run(async () => setRevisions(await client.items.history(vaultId, item.itemId)));
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
                  // A version the signed history cannot vouch for comes back only when the person says so.
                  if (
                    !r.verified &&
                    !confirm(
                      `Revision ${r.revision} was written before the signed history this browser checked: which version the server is giving back cannot be checked. Restore it anyway?`,
                    )
                  )
                    throw new Error("Not restored.");
                  // Exactly what is shown here, or a refusal: the server cannot swap in another version meanwhile.
                  const restored = await client.items.restoreRevision(vaultId, item.itemId, r.revision, r, { unverified: !r.verified });
                  onRestored(restored);
                })
              }
            >
              Restore revision {r.revision}
            </button>
            <FileList vaultId={vaultId} files={r.attachments} label={`Files of revision ${r.revision}`} />
          </li>
        ))}
      </ol>
      <ErrorNote error={act.error} />
    </section>
  );
}
