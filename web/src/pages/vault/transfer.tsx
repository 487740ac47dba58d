/** A vault's import and export: files read and written here in the browser (the formats: sdk/transfer/, loaded when first used). */
import { useState } from "preact/hooks";
import type { ExportFormat } from "../../../../sdk";
import { currentClient } from "../../session";
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
  partial: Array<{ name: string; left: Array<{ part: string; why: string }> }>;
  skipped: Array<{ name: string; why: string }>;
}

const isKeepassName = (file: File | null) => !!file && /\.kdbx$/i.test(file.name);

/** `file` read here (with its password and, for KeePass, its key file) and its items sealed and added to the vault. */
async function importFile(
  vaultId: string,
  file: File,
  password: string,
  keyFile: File | null,
  onProgress: (text: string) => void,
): Promise<Report> {
  const client = currentClient();
  const { readImport } = await import("../../../../sdk/transfer");
  const parsed = await readImport(new Uint8Array(await file.arrayBuffer()), {
    ...(password && { password }),
    ...(keyFile && isKeepassName(file) && { keyFile: new Uint8Array(await keyFile.arrayBuffer()) }),
  });
  const result = await client.items.import(vaultId, parsed.items, (p) =>
    onProgress(`${p.phase === "seal" ? "Encrypting" : "Sending"}: ${p.done} of ${p.total}`),
  );
  return { imported: result.imported, partial: [...parsed.partial, ...result.partial], skipped: [...parsed.skipped, ...result.skipped] };
}

/** A file of another password manager (or an export of this vault) read here, its items sealed here and added. */
function Import({ vaultId, onImported }: { vaultId: string; onImported(): void }) {
  const [file, setFile] = useState<File | null>(null);
  const [keyFile, setKeyFile] = useState<File | null>(null);
  const [filePassword, setFilePassword] = useState("");
  const [progress, setProgress] = useState<string | null>(null);
  const [report, setReport] = useState<Report | null>(null);
  const importing = useAction();
  const runImport = (e: Event) => {
    e.preventDefault();
    if (!file) return;
    void importing.run(async () => {
      setReport(null);
      try {
        setReport(await importFile(vaultId, file, filePassword, keyFile, setProgress));
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
        <Field
          id="import-file"
          label="File to import"
          hint="Bitwarden (JSON or CSV), 1Password (.1pux), KeePass (.kdbx), LastPass (CSV), a CSV, or an export of this vault"
        >
          <input
            id="import-file"
            type="file"
            onChange={(e) => {
              // A key file belongs to one database: another file chosen starts without it.
              setFile(chosenFile(e));
              setKeyFile(null);
            }}
          />
        </Field>
        <Secret
          id="import-password"
          label="The file's password"
          hint="For a KeePass database, an encrypted export or a password-protected Bitwarden export"
          value={filePassword}
          onInput={setFilePassword}
        />
        {isKeepassName(file) && <KeyFileField file={file!} onChosen={setKeyFile} />}
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
  const { imported, partial, skipped } = report;
  return (
    <div role="status" class="note">
      <p>
        Imported {imported} item{imported === 1 ? "" : "s"} ({partial.length} with parts left out); skipped {skipped.length}.
      </p>
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
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `${vaultName.replace(/[^\w.-]+/g, "_")}-${format === "encrypted" ? "encrypted.json" : `export.${format}`}`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A password typed into the form (kept only as long as the form needs it): a new one (`fresh`), or one to neither fill nor keep. */
function Secret(props: { id: string; label: string; hint?: string; value: string; onInput(value: string): void; fresh?: boolean }) {
  const { fresh, ...field } = props;
  return <PasswordField {...field} autocomplete={fresh ? "new-password" : "off"} />;
}
