/**
 * Files on items (client.attachments): an item's files with Download and Remove, and attaching one
 * with its progress; a kept revision's or a trashed item's files with Download. Sealed here and
 * checked chunk by chunk by the SDK on download; a download is gathered into a Blob a chunk at a
 * time and saved under the file's name, never opened in the page. Loaded apart from the first page
 * (files-lazy.tsx).
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, sentence, type Item } from "../../../../sdk";
import { fileSizeText, type ItemAttachment } from "../../../../sdk/attachments/attachment";
import { currentClient } from "../../session";
import { saveBlob } from "../../save-blob";
import { Dialog } from "../../components/dialog";
import { ErrorNote, useAction } from "../../components/ui";
import { useOffline } from "../../offline";
import { useListeners } from "../../subscribe";

// ---- Uploads in progress, one an item at a time: kept here, so an item opened again shows its own ----

interface Upload {
  name: string;
  sent: number;
  size: number;
}
interface Outcome {
  text: string;
  error: boolean;
}
const uploads = new Map<string, Upload>();
const outcomes = new Map<string, Outcome>();
const listeners = new Set<() => void>();
const changed = () => {
  for (const l of listeners) l();
};
const itemKey = (item: Item) => `${item.vaultId}/${item.itemId}`;

/** What the server refused (a 413: too large, too many files, the organization's quota) in its own words; else the app's sentence. */
function refusal(err: unknown): string {
  if (err instanceof ApiError && err.status === 413) return `The file was not attached: ${err.message.replace(/\.?$/, ".")}`;
  return sentence(err);
}

/** Seals and uploads `file` to the item, unless one is being uploaded to it already; `onDone` hears the item as written. */
async function startUpload(item: Item, file: File, onDone: () => void): Promise<void> {
  const key = itemKey(item);
  if (uploads.has(key)) return;
  uploads.set(key, { name: file.name, sent: 0, size: file.size });
  outcomes.delete(key);
  changed();
  try {
    await currentClient().attachments.upload(item.vaultId, item.itemId, file.name, file, {
      ...(file.type && { type: file.type }),
      onProgress: (sent, size) => {
        uploads.set(key, { name: file.name, sent, size });
        changed();
      },
    });
    outcomes.set(key, { text: `Attached ${file.name}.`, error: false });
    onDone();
  } catch (err) {
    outcomes.set(key, { text: refusal(err), error: true });
  } finally {
    uploads.delete(key);
    changed();
  }
}

// ---- Downloads --------------------------------------------------------------------------------------

/** Reads the file chunk by chunk (each checked by the SDK) into a Blob, then hands it to the browser as a download named as the file. */
async function saveFile(vaultId: string, file: ItemAttachment, onProgress: (read: number) => void): Promise<void> {
  const parts: Blob[] = [];
  let read = 0;
  await currentClient().attachments.download(vaultId, file, (chunk) => {
    // A Blob a chunk: the chunk's bytes can go as soon as the Blob holds them.
    parts.push(new Blob([chunk]));
    read += chunk.length;
    onProgress(read);
  });
  // Saved as plain bytes, so the browser never shows the file in the page.
  saveBlob(new Blob(parts, { type: "application/octet-stream" }), file.name);
}

/** One download at a time per list, with what it has read so far. */
function useDownload(vaultId: string) {
  const [reading, setReading] = useState<{ name: string; read: number; size: number } | null>(null);
  const act = useAction();
  const download = (file: ItemAttachment) =>
    act.run(async () => {
      setReading({ name: file.name, read: 0, size: file.size });
      try {
        await saveFile(vaultId, file, (read) => setReading({ name: file.name, read, size: file.size }));
      } finally {
        setReading(null);
      }
    });
  return { reading, error: act.error, download };
}

function Progress({ verb, name, done, size }: { verb: string; name: string; done: number; size: number }) {
  return (
    <p class="meta" role="status">
      {verb} {name}: {fileSizeText(done)} of {fileSizeText(size)}
    </p>
  );
}

/** A file's row: its name and size, Download, and Remove where the item's files can be changed here. */
function FileRow(props: { file: ItemAttachment; downloadOff: boolean; onDownload(): void; onRemove?: () => void; removeOff?: boolean }) {
  const { file } = props;
  return (
    <li>
      <span>{file.name}</span> <span class="meta">{fileSizeText(file.size)}</span>{" "}
      <button type="button" class="secondary" aria-label={`Download ${file.name}`} disabled={props.downloadOff} onClick={props.onDownload}>
        Download
      </button>
      {props.onRemove && (
        <>
          {" "}
          <button type="button" class="danger" aria-label={`Remove ${file.name}`} disabled={props.removeOff} onClick={props.onRemove}>
            Remove
          </button>
        </>
      )}
    </li>
  );
}

/** Files a kept revision, a trashed item or an item seen outside its vault holds: each downloaded, checked by the SDK. */
export function FileList({ vaultId, files, label }: { vaultId: string; files: readonly ItemAttachment[]; label: string }) {
  const offline = useOffline();
  const { reading, error, download } = useDownload(vaultId);
  if (files.length === 0) return null;
  return (
    <div class="file-list">
      <ul class="list" aria-label={label}>
        {files.map((f) => (
          <FileRow key={f.id} file={f} downloadOff={offline || reading !== null} onDownload={() => void download(f)} />
        ))}
      </ul>
      {reading && <Progress verb="Downloading" name={reading.name} done={reading.read} size={reading.size} />}
      <ErrorNote error={error} />
    </div>
  );
}

/**
 * The item's files in its view. With `onChanged` (the item's vault is open here): Remove, after a
 * confirmation, and "Attach a file"; `onChanged` is told once the item has a new revision.
 */
export function ItemFiles({ item, onChanged }: { item: Item; onChanged?: () => void }) {
  useListeners(listeners);
  const offline = useOffline();
  const { reading, error, download } = useDownload(item.vaultId);
  const [removing, setRemoving] = useState<ItemAttachment | null>(null);
  const remove = useAction();
  const files = item.attachments ?? [];
  const upload = uploads.get(itemKey(item));
  const outcome = outcomes.get(itemKey(item));
  // An outcome seen is not shown again the next time the item opens (one that comes while it is closed is).
  useEffect(
    () => () => {
      if (!uploads.has(itemKey(item))) outcomes.delete(itemKey(item));
    },
    [],
  );
  if (files.length === 0 && !onChanged) return null;
  const editable = onChanged !== undefined && !offline;
  return (
    <section class="files" aria-labelledby={`files-${item.itemId}`}>
      <h4 id={`files-${item.itemId}`}>Files</h4>
      {files.length === 0 ? (
        <p class="meta">No files yet.</p>
      ) : (
        <ul class="list" aria-label={`Files of ${item.name}`}>
          {files.map((f) => (
            <FileRow
              key={f.id}
              file={f}
              downloadOff={offline || reading !== null}
              onDownload={() => void download(f)}
              {...(editable && { onRemove: () => setRemoving(f), removeOff: upload !== undefined || remove.busy })}
            />
          ))}
        </ul>
      )}
      {reading && <Progress verb="Downloading" name={reading.name} done={reading.read} size={reading.size} />}
      <ErrorNote error={error} />
      <ErrorNote error={remove.error} />
      {offline && <p class="meta">Files are attached, removed and downloaded while the server answers.</p>}
      {editable && <AttachFile item={item} upload={upload} onChanged={onChanged} />}
      {outcome && (outcome.error ? <ErrorNote error={outcome.text} /> : <p role="status">{outcome.text}</p>)}
      {removing && (
        <ConfirmRemove
          item={item}
          file={removing}
          onClose={() => setRemoving(null)}
          onConfirm={() => {
            setRemoving(null);
            void remove.run(async () => {
              await currentClient().attachments.remove(item.vaultId, item.itemId, removing.id);
              onChanged?.();
            });
          }}
        />
      )}
    </section>
  );
}

/** The file input: off while a file is being uploaded to the item, whose progress shows below it. */
function AttachFile({ item, upload, onChanged }: { item: Item; upload: Upload | undefined; onChanged: () => void }) {
  const id = `attach-${item.itemId}`;
  return (
    <>
      <div class="field">
        <label for={id}>Attach a file</label>
        <input
          id={id}
          type="file"
          disabled={upload !== undefined}
          onChange={(e) => {
            const input = e.currentTarget as HTMLInputElement;
            const file = input.files?.[0];
            // Cleared at once: choosing the same file again is a new upload, once this one is done.
            input.value = "";
            if (file) void startUpload(item, file, onChanged);
          }}
        />
      </div>
      {upload && <Progress verb="Uploading" name={upload.name} done={upload.sent} size={upload.size} />}
    </>
  );
}

function ConfirmRemove(props: { item: Item; file: ItemAttachment; onClose(): void; onConfirm(): void }) {
  const { item, file } = props;
  return (
    <Dialog label={`Remove ${file.name}`} onClose={props.onClose}>
      <h3>Remove {file.name}?</h3>
      <p>
        It is taken off {item.name}. The item's earlier versions keep it, and it can be downloaded from them, until they are no longer kept.
      </p>
      <p>
        <button type="button" class="danger" onClick={props.onConfirm}>
          Remove the file
        </button>{" "}
        <button type="button" class="secondary" onClick={props.onClose}>
          Cancel
        </button>
      </p>
    </Dialog>
  );
}
