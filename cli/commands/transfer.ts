/** Import into a vault and export out of it: files read and written on this machine (the formats: sdk/transfer/). */
import fs from "node:fs";
import { printable, type VaultClient, type VaultPerFolderResult } from "../../sdk";
import { EXPORT_FORMATS, readImport, type ExportFormat, type FileLeftOut, type ImportItem } from "../../sdk/transfer";
import { progressBar, UsageError } from "../output";
import { confirmOrStop, readNewPassword, readPassword } from "../password";
import { type Command, YES_OPTION, findVault, plural, shownName } from "./shared";

export const transferCommands: Command[] = [
  {
    path: ["import"],
    args: ["<vault>", "<file>"],
    summary:
      "Import a Bitwarden (JSON, .zip with attachments, or CSV), 1Password (.1pux), KeePass (.kdbx), LastPass (CSV), CSV or vaultctl export file into a vault, encrypted here (files too)",
    options: {
      "password-file": {
        type: "string",
        value: "FILE",
        description:
          "the file's password (KeePass, an encrypted export, a password-protected Bitwarden export) from the first line of FILE",
      },
      "password-env": { type: "string", value: "NAME", description: "the file's password from the environment variable NAME" },
      "key-file": { type: "string", value: "FILE", description: "a KeePass key file" },
      "vault-per-folder": {
        type: "boolean",
        description: "a new vault for each 1Password vault, top-level folder or KeePass group of the file, named after it",
      },
    },
    async run(ctx, [vaultRef, file], opts) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const bytes = new Uint8Array(fs.readFileSync(file!));
      // A KeePass database, an encrypted export of ours, a password-protected Bitwarden export: the file's password.
      const head = new TextDecoder().decode(bytes.subarray(0, 400));
      const needsPassword = bytes[0] === 0x03 || /"format"\s*:\s*"vault-export\/v1"|"passwordProtected"\s*:\s*true/.test(head);
      const password = needsPassword
        ? await readPassword({ passwordFile: opts["password-file"], passwordEnv: opts["password-env"] }, "The file's password: ")
        : undefined;
      const parsed = await readImport(bytes, {
        ...(password !== undefined && { password }),
        ...(opts["key-file"] && { keyFile: new Uint8Array(fs.readFileSync(opts["key-file"])) }),
      });
      const total = await importInto(client, vault.vaultId, parsed.items, opts["vault-per-folder"] === true, ctx.progress);
      total.partial.unshift(...parsed.partial);
      total.skipped.unshift(...parsed.skipped);
      const into = total.vaults.map((v) => (v.place === undefined ? shownName(vault) : `"${printable(v.place)}"`)).join(", ");
      const lines = [
        `Imported ${plural(total.imported, "item")} (${total.partial.length} with parts left out) into ${into} from a ${parsed.format} file ` +
          `(${plural(total.requests, "request")}); skipped ${total.skipped.length}.`,
        // Names and reasons come from the file: shown as text, never as terminal control sequences.
        ...(total.partial.length > 0
          ? [
              "Parts left out:",
              ...total.partial.flatMap((p) => p.left.map((l) => `  ${printable(p.name)}: ${printable(l.part)}: ${printable(l.why)}`)),
            ]
          : []),
        ...(total.skipped.length > 0 ? ["Skipped:", ...total.skipped.map((s) => `  ${printable(s.name)}: ${printable(s.why)}`)] : []),
        ...filesLines(total),
      ];
      return {
        json: {
          imported: total.imported,
          format: parsed.format,
          vaults: total.vaults.map((v) => v.vaultId),
          partial: total.partial,
          skipped: total.skipped,
          files: total.files,
          filesFailed: total.filesFailed,
        },
        text: lines.join("\n"),
      };
    },
  },
  {
    path: ["export"],
    args: ["<vault...>"],
    summary:
      "Export vaults to a file: encrypted with a passphrase (default, re-importable, the items' files carried), or in the clear as JSON or CSV",
    options: {
      out: { type: "string", value: "FILE", description: "where to write it (it must not exist)" },
      format: { type: "string", value: "FORMAT", description: `${EXPORT_FORMATS.join(", ")} (default encrypted)` },
      "passphrase-file": { type: "string", value: "FILE", description: "the export's passphrase from the first line of FILE" },
      "passphrase-env": { type: "string", value: "NAME", description: "the export's passphrase from the environment variable NAME" },
      yes: YES_OPTION,
    },
    async run(ctx, refs, opts) {
      const format = (opts.format ?? "encrypted") as ExportFormat;
      if (!EXPORT_FORMATS.includes(format)) throw new UsageError(`--format is one of ${EXPORT_FORMATS.join(", ")}, not ${format}`);
      if (!opts.out) throw new UsageError("--out FILE: where to write the export");
      if (fs.existsSync(opts.out)) throw new UsageError(`${opts.out} exists: choose another file`);
      const client = await ctx.unlocked();
      const vaults = [];
      for (const ref of refs) vaults.push(await findVault(client, ref));
      let passphrase: string | undefined;
      if (format === "encrypted")
        passphrase = await readNewPassword({ file: opts["passphrase-file"], env: opts["passphrase-env"] }, "A passphrase for the export: ");
      else
        await confirmOrStop(
          `This writes every password of ${vaults.map((v) => shownName(v)).join(", ")} IN THE CLEAR to ${opts.out}: anyone who reads the file reads them. Go on?`,
          opts.yes === true,
        );
      const bar = progressBar(ctx.progress);
      let files: { carried: number; leftOut: FileLeftOut[] } = { carried: 0, leftOut: [] };
      let text: string;
      try {
        text = await client.vaults.export(
          vaults.map((v) => v.vaultId),
          format,
          passphrase,
          { onProgress: bar, onFiles: (f) => (files = f) },
        );
      } finally {
        bar.end();
      }
      fs.writeFileSync(opts.out, text, { mode: 0o600, flag: "wx" });
      const how =
        format === "encrypted" ? `encrypted with the passphrase, ${plural(files.carried, "file")} carried` : `${format}, in the clear`;
      return {
        json: { out: opts.out, format, vaults: vaults.map((v) => v.vaultId), ...(format === "encrypted" && files) },
        text: [
          `Exported ${plural(vaults.length, "vault")} to ${opts.out} (${how}).`,
          ...(files.leftOut.length > 0
            ? [
                "Files left out (listed in the export):",
                ...files.leftOut.map((f) => `  ${printable(f.item)}: ${printable(f.file)}: ${printable(f.why)}`),
              ]
            : []),
        ].join("\n"),
      };
    },
  },
];

/** What an import says of files: how many came in, and each that did not, with why. */
function filesLines(total: VaultPerFolderResult): string[] {
  if (total.files === 0 && total.filesFailed.length === 0) return [];
  return [
    `Attached ${plural(total.files, "file")} to the items imported.`,
    ...(total.filesFailed.length > 0
      ? ["Files not attached:", ...total.filesFailed.map((f) => `  ${printable(f.item)}: ${printable(f.file)}: ${printable(f.why)}`)]
      : []),
  ];
}

/**
 * The items into `vaultId`, or (`perFolder`) each folder of the file into a new vault of its name
 * and the rest into `vaultId` (the SDK's `importVaultPerFolder`, as the web vault does); one progress bar per vault.
 */
async function importInto(
  client: VaultClient,
  vaultId: string,
  items: ImportItem[],
  perFolder: boolean,
  progress: boolean,
): Promise<VaultPerFolderResult> {
  let bar = progressBar(progress);
  let filling = vaultId;
  try {
    if (!perFolder) {
      const result = await client.items.import(vaultId, items, bar);
      return { ...result, vaults: [{ vaultId, imported: result.imported }] };
    }
    return await client.items.importVaultPerFolder(vaultId, items, (p) => {
      if (p.vaultId !== filling) {
        bar.end();
        bar = progressBar(progress);
        filling = p.vaultId;
      }
      bar(p);
    });
  } finally {
    bar.end();
  }
}
