/** A vault's import and export: files read and written here in the browser (the formats: sdk/transfer/, loaded when first used). */
import { saveBlob } from "../../save-blob";
import { useState } from "preact/hooks";
import type { ExportFormat, TransferProgress } from "../../../../sdk";
import { currentClient, refreshNow } from "../../session";
import { Choice, ErrorNote, Field, PasswordField, useAction } from "../../components/ui";

const FORMAT_CHOICES = [
  ["encrypted", "Encrypted with a passphrase (can be imported again)"] as const,
  ["json", "JSON, in the clear"] as const,
  ["csv", "CSV, in the clear"] as const,
];

export function Transfer({ vaultId, vaultName, onImported }: { vaultId: string; vaultName: string; onImported(): void }) {
  return (
    <section aria-labelledby="transfer-heading">
      <h2 id="transfer-heading">Import and export</h2>
      <Import vaultId={vaultId} onImported={onImported} />
      <Export vaultId={vaultId} vaultName={vaultName} />
    </section>
  );
}

interface Report {
  imported: number;
  /** The vaults made, one per folder of the file (with a vault per folder), each with the items it got. */
  made: Array<{ vaultId: string; name: string; imported: number }>;
  partial: Array<{ name: string; left: Array<{ part: string; why: string }> }>;
  skipped: Array<{ name: string; why: string }>;
  /** Files attached to the items imported, and those that were not (by item and file name). */
  files: number;
  filesFailed: Array<{ item: string; file: string; why: string }>;
}

const isKeepassName = (file: File | null) => !!file && /\.kdbx$/i.test(file.name);

/**
 * `file` read here (with its password and, for KeePass, its key file) and its items sealed and added
 * to the vault, or (`perFolder`) each of its folders to a new vault of its name and the rest to the vault.
 */
async function importFile(
  vaultId: string,
  source: { file: File; password: string; keyFile: File | null; perFolder: boolean },
  onProgress: (text: string) => void,
): Promise<Report> {
  const client = currentClient();
  const { file, password, keyFile, perFolder } = source;
  const { readImport } = await import("../../../../sdk/transfer");
  const parsed = await readImport(new Uint8Array(await file.arrayBuffer()), {
    ...(password && { password }),
    ...(keyFile && isKeepassName(file) && { keyFile: new Uint8Array(await keyFile.arrayBuffer()) }),
  });
  const step = (p: TransferProgress) => `${p.phase === "seal" ? "Encrypting" : "Sending"}: ${p.done} of ${p.total}`;
  const result = perFolder
    ? await client.items.importVaultPerFolder(vaultId, parsed.items, (p) => onProgress(`${p.place ?? "This vault"}: ${step(p)}`))
    : { ...(await client.items.import(vaultId, parsed.items, (p) => onProgress(step(p)))), vaults: [] };
  const made = result.vaults.flatMap((v) => (v.place === undefined ? [] : [{ vaultId: v.vaultId, name: v.place, imported: v.imported }]));
  return {
    imported: result.imported,
    made,
    partial: [...parsed.partial, ...result.partial],
    skipped: [...parsed.skipped, ...result.skipped],
    files: result.files,
    filesFailed: result.filesFailed,
  };
}

/** A file of another password manager (or an export of this vault) read here, its items sealed here and added. */
function Import({ vaultId, onImported }: { vaultId: string; onImported(): void }) {
  const [file, setFile] = useState<File | null>(null);
  const [keyFile, setKeyFile] = useState<File | null>(null);
  const [filePassword, setFilePassword] = useState("");
  const [perFolder, setPerFolder] = useState(false);
  const [progress, setProgress] = useState<string | null>(null);
  const [report, setReport] = useState<Report | null>(null);
  const importing = useAction();
  const runImport = (e: Event) => {
    e.preventDefault();
    if (!file) return;
    void importing.run(async () => {
      setReport(null);
      try {
        const done = await importFile(vaultId, { file, password: filePassword, keyFile, perFolder }, setProgress);
        setReport(done);
        // The sidebar's vault list reads the vaults made.
        if (done.made.length > 0) refreshNow();
      } finally {
        setProgress(null);
        setFilePassword("");
      }
      onImported();
    });
  };
  return (
    <>
      <form onSubmit={runImport} aria-label="Import">
        <ImportFileField
          onChosen={(f) => {
            // A key file belongs to one database: another file chosen starts without it.
            setFile(f);
            setKeyFile(null);
          }}
        />
        <Secret
          id="import-password"
          label="The file's password"
          hint="For a KeePass database, an encrypted export or a password-protected Bitwarden export"
          value={filePassword}
          onInput={setFilePassword}
        />
        {isKeepassName(file) && <KeyFileField file={file!} onChosen={setKeyFile} />}
        <PerFolderField checked={perFolder} onChange={setPerFolder} />
        <button type="submit" disabled={!file || importing.busy}>
          Import
        </button>
      </form>
      {progress && (
        <p role="status" class="note">
          {progress}
        </p>
      )}
      <ErrorNote error={importing.error} />
      {report && <ImportReport report={report} />}
    </>
  );
}

const chosenFile = (e: Event) => (e.currentTarget as HTMLInputElement).files?.[0] ?? null;

/** The file to import. */
function ImportFileField({ onChosen }: { onChosen(f: File | null): void }) {
  return (
    <Field
      id="import-file"
      label="File to import"
      hint="Bitwarden (JSON, .zip with attachments, or CSV), 1Password (.1pux), KeePass (.kdbx), LastPass (CSV), a CSV, or an export of this vault"
    >
      <input id="import-file" type="file" onChange={(e) => onChosen(chosenFile(e))} />
    </Field>
  );
}

/** Whether each 1Password vault, top-level folder or KeePass group of the file goes into a new vault of its own (the SDK's `importVaultPerFolder`). */
function PerFolderField({ checked, onChange }: { checked: boolean; onChange(checked: boolean): void }) {
  return (
    <div class="field">
      <label>
        <input
          type="checkbox"
          aria-describedby="import-per-folder-hint"
          checked={checked}
          onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)}
        />{" "}
        One vault per source vault or top-level folder
      </label>
      <small id="import-per-folder-hint">Each is a new vault named after it; the items kept in no folder come into this vault.</small>
    </div>
  );
}

/** A KeePass database's key file, asked once a .kdbx is chosen; a new database chosen starts the field empty. */
function KeyFileField({ file, onChosen }: { file: File; onChosen(f: File | null): void }) {
  return (
    <Field id="import-key-file" label="Key file (optional)" hint="Only if the KeePass database was made with a key file">
      <input key={file.name} id="import-key-file" type="file" onChange={(e) => onChosen(chosenFile(e))} />
    </Field>
  );
}

/** What was imported, and every item with a part left out or skipped whole, each with why. */
function ImportReport({ report }: { report: Report }) {
  const { imported, made, partial, skipped, files, filesFailed } = report;
  return (
    <div role="status" class="note">
      <p>
        Imported {imported} item{imported === 1 ? "" : "s"} ({partial.length} with parts left out); skipped {skipped.length}.
      </p>
      {(files > 0 || filesFailed.length > 0) && (
        <p>
          Attached {files} file{files === 1 ? "" : "s"} to the items imported.
        </p>
      )}
      {filesFailed.length > 0 && (
        <ul aria-label="Files not attached">
          {filesFailed.map((f, n) => (
            <li key={n}>
              {f.item}: {f.file}: {f.why}
            </li>
          ))}
        </ul>
      )}
      {made.length > 0 && <MadeVaults made={made} />}
      {partial.length > 0 && (
        <ul aria-label="Parts left out">
          {partial.flatMap((p, n) =>
            p.left.map((l, m) => (
              <li key={`${n}-${m}`}>
                {p.name}: {l.part}: {l.why}
              </li>
            )),
          )}
        </ul>
      )}
      {skipped.length > 0 && (
        <ul aria-label="Skipped">
          {skipped.map((s, n) => (
            <li key={n}>
              {s.name}: {s.why}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The vaults an import made, one per folder of the file, each a link with the items it got. */
function MadeVaults({ made }: { made: Report["made"] }) {
  return (
    <>
      <p>
        Made {made.length} vault{made.length === 1 ? "" : "s"}, one per folder of the file:
      </p>
      <ul aria-label="Vaults made">
        {made.map((v) => (
          <li key={v.vaultId}>
            <a href={`#/vault/${v.vaultId}`}>{v.name}</a> ({v.imported} item{v.imported === 1 ? "" : "s"})
          </li>
        ))}
      </ul>
    </>
  );
}

/** The vault written to a file here: encrypted with a passphrase, or in the clear once the person says so. */
function Export({ vaultId, vaultName }: { vaultId: string; vaultName: string }) {
  const client = currentClient();
  const [format, setFormat] = useState<ExportFormat>("encrypted");
  const [passphrase, setPassphrase] = useState("");
  const [again, setAgain] = useState("");
  const exporting = useAction();
  const runExport = (e: Event) => {
    e.preventDefault();
    void exporting.run(async () => {
      if (format === "encrypted") {
        if (passphrase.length < 12) throw new Error("Choose a passphrase of at least 12 characters for the export.");
        if (passphrase !== again) throw new Error("The two passphrases differ.");
      } else if (
        !confirm(
          `This saves every password of "${vaultName}" IN THE CLEAR to a file on this computer: anyone who reads the file reads them. Export anyway?`,
        )
      )
        return;
      const text = await client.vaults.export([vaultId], format, format === "encrypted" ? passphrase : undefined);
      // The passphrase is not kept in the form once used.
      setPassphrase("");
      setAgain("");
      download(text, format, vaultName);
    });
  };
  return (
    <>
      <form onSubmit={runExport} aria-label="Export">
        <Choice id="export-format" label="Export as" value={format} options={FORMAT_CHOICES} onChange={setFormat} />
        {format === "encrypted" ? (
          <>
            <Secret id="export-passphrase" label="Export passphrase" value={passphrase} onInput={setPassphrase} fresh />
            <Secret id="export-passphrase-again" label="Export passphrase, again" value={again} onInput={setAgain} fresh />
          </>
        ) : (
          <p class="warning" role="note">
            A file in the clear holds every password of this vault, readable by anyone who gets the file.
          </p>
        )}
        <button type="submit" disabled={exporting.busy}>
          Export
        </button>
      </form>
      <ErrorNote error={exporting.error} />
    </>
  );
}

/** Hands `text` to the browser as a file download, named after the vault. */
function download(text: string, format: ExportFormat, vaultName: string): void {
  const type = format === "csv" ? "text/csv" : "application/json";
  saveBlob(
    new Blob([text], { type }),
    `${vaultName.replace(/[^\w.-]+/g, "_")}-${format === "encrypted" ? "encrypted.json" : `export.${format}`}`,
  );
}

/** A password typed into the form (kept only as long as the form needs it): a new one (`fresh`), or one to neither fill nor keep. */
function Secret(props: { id: string; label: string; hint?: string; value: string; onInput(value: string): void; fresh?: boolean }) {
  const { fresh, ...field } = props;
  return <PasswordField {...field} autocomplete={fresh ? "new-password" : "off"} />;
}
