/**
 * The member's sends, newest first: each one's title and link opened here from its owner note
 * (sealed to this account's key), its kind, views, expiry, whether it has a password and whether
 * its last view was taken; Copy link, and Delete after a confirmation.
 */
import { useEffect, useState } from "preact/hooks";
import type { SendSummary } from "../../../../sdk/client";
import { currentClient, useRefresh } from "../../session";
import { Dialog } from "../../components/dialog";
import { Busy, ErrorNote, useAction } from "../../components/ui";

/** A send's name in the list: its title, or why there is none. */
const nameOf = (s: SendSummary): string => s.title ?? "A send whose title no longer opens";

function viewsText(s: SendSummary): string {
  if (s.maxViews === null) return `${s.views} ${s.views === 1 ? "view" : "views"}`;
  return `${s.views} of ${s.maxViews} ${s.maxViews === 1 ? "view" : "views"}`;
}

/** `version` changes when a send was made: the list is read again. */
export function SendList({ version }: { version: number }) {
  const client = currentClient();
  const refresh = useRefresh();
  const [sends, setSends] = useState<SendSummary[] | null>(null);
  const [deleting, setDeleting] = useState<SendSummary | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const load = useAction();
  const remove = useAction();
  const reload = () => load.run(async () => setSends(await client.sends.list({ linkBase: location.origin })));
  useEffect(() => void reload(), [version, refresh]);
  const copy = (s: SendSummary) =>
    void navigator.clipboard.writeText(s.link!).then(
      () => setCopied(s.sendId),
      () => setCopied(null),
    );
  return (
    <section aria-labelledby="sends-heading">
      <h2 id="sends-heading">Your sends</h2>
      {load.busy && !sends && <Busy label="Reading your sends…" />}
      <ErrorNote error={load.error} />
      <ErrorNote error={remove.error} />
      {sends && sends.length === 0 && <p>No sends yet.</p>}
      {sends && sends.length > 0 && (
        <ul class="list" aria-label="Your sends">
          {sends.map((s) => (
            <SendRow key={s.sendId} send={s} copied={copied === s.sendId} onCopy={() => copy(s)} onDelete={() => setDeleting(s)} />
          ))}
        </ul>
      )}
      {deleting && (
        <ConfirmDelete
          send={deleting}
          onClose={() => setDeleting(null)}
          onConfirm={() => {
            setDeleting(null);
            void remove.run(async () => {
              await client.sends.remove(deleting.sendId);
              await reload();
            });
          }}
        />
      )}
    </section>
  );
}

function SendRow(props: { send: SendSummary; copied: boolean; onCopy(): void; onDelete(): void }) {
  const s = props.send;
  const name = nameOf(s);
  return (
    <li>
      <strong>{name}</strong>
      {s.kind && <span class="meta">{s.kind === "file" ? "File" : "Text"}</span>}
      <span class="meta">{viewsText(s)}</span>
      <span class="meta">Expires {new Date(s.expiresAt).toLocaleString()}</span>
      <span class="meta">{s.hasPassword ? "Password: yes" : "Password: no"}</span>
      {s.partsGone && <span class="meta">used up</span>}
      {!s.complete && <span class="meta">not finished: its link opens nothing</span>}
      {s.link && (
        <button type="button" class="secondary" aria-label={`Copy link of ${name}`} onClick={props.onCopy}>
          Copy link
        </button>
      )}
      {props.copied && <span role="status">Copied.</span>}
      <button type="button" class="danger" aria-label={`Delete ${name}`} onClick={props.onDelete}>
        Delete
      </button>
    </li>
  );
}

function ConfirmDelete(props: { send: SendSummary; onClose(): void; onConfirm(): void }) {
  const name = nameOf(props.send);
  return (
    <Dialog label={`Delete ${name}`} onClose={props.onClose}>
      <h3>Delete {name}?</h3>
      <p>Its link opens nothing more from now on, for anyone who has not opened it yet as well.</p>
      <p>
        <button type="button" class="danger" onClick={props.onConfirm}>
          Delete the send
        </button>{" "}
        <button type="button" class="secondary" onClick={props.onClose}>
          Cancel
        </button>
      </p>
    </Dialog>
  );
}
