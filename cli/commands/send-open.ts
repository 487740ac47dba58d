/**
 * `vaultctl send open`: a send opened by its link, with no account and nothing kept. Everything it
 * shows opened under the key the link's fragment (and the password) gives; the server learns
 * neither. A view is taken only once the password (when there is one) is right, so a missing or
 * wrong one costs nothing; what could be checked before the open (a file in the way) is.
 */
import fs from "node:fs";
import path from "node:path";
import { ApiError, needsSendPassword, openSend, parseSendLink, printable, SecurityError, sentence } from "../../sdk";
import type { OpenedSend, OpenSendOptions } from "../../sdk";
import { fileSizeText } from "../../sdk/attachments/attachment";
import { apiBase } from "../context";
import { saveChecked } from "../file-io";
import { NotFoundError, UsageError, type Output } from "../output";
import { readPassword } from "../password";
import { type Command, notes, usage } from "./shared";

/** Where the send's password comes from when it has one (the prompt, or standard input, otherwise). */
interface PasswordSources {
  file?: string;
  env?: string;
}

/** Times a password typed on the terminal is asked again after a wrong one. */
const TRIES = 3;

export const sendOpenCommand: Command = {
  path: ["send", "open"],
  args: ["<link>"],
  summary: "Open a send by its link, no account needed (one view taken): a text to standard output, a file saved",
  options: {
    out: {
      type: "string",
      short: "o",
      value: "PATH",
      description: "save what it holds there (a directory: in it, under the file's name); - for standard output",
    },
    force: { type: "boolean", description: "replace a file already at that path" },
    "password-file": { type: "string", value: "FILE", description: "the send's password, if it asks for one, from the first line of FILE" },
    "password-env": { type: "string", value: "NAME", description: "the send's password from the environment variable NAME" },
  },
  async run(ctx, [link], opts) {
    if (!parseSendLink(link!))
      usage("that is not a send's link: it ends #/send/<id>/<secret> (quote it, so that the shell keeps all of it)");
    if (!opts.server) checkLinkServer(parseSendLink(link!)!.base);
    const out = opts.out as string | undefined;
    const force = opts.force === true;
    if (out === "-" && ctx.json) usage("-o - writes what the send holds to standard output: it has no room for --json");
    // A path named outright is checked before the open takes a view.
    const named = out !== undefined && out !== "-" && !isDirectory(out) ? path.resolve(out) : undefined;
    if (named !== undefined && !force && exists(named)) usage(`${named} exists: --force replaces it (the send was not opened)`);
    // The link names its server; VAULT_SERVER names yours, so only an explicit --server goes elsewhere.
    const base: OpenSendOptions = opts.server ? { apiUrl: apiBase(opts.server as string) } : {};
    const opened = await openAsked(link!, base, { file: opts["password-file"], env: opts["password-env"] }, ctx.progress);
    sayWhat(opened);
    if (out === undefined && opened.kind === "text") return { json: view(opened), text: shownText(opened.text!) };
    const data = opened.kind === "text" ? new TextEncoder().encode(opened.text) : opened.file!.data;
    if (out === "-") {
      await new Promise<void>((resolve, reject) => process.stdout.write(data, (err) => (err ? reject(err) : resolve())));
      return { json: view(opened), text: "" };
    }
    const target = named ?? placeIn(out ?? ".", ownName(opened), force);
    await saveChecked(target, force, (write) => write(data));
    return saved(opened, target, data.length);
  },
};

/** The open, with the password asked for only when the server says the send has one. */
async function openAsked(link: string, base: OpenSendOptions, sources: PasswordSources, progress: boolean): Promise<OpenedSend> {
  const bar = partProgress(progress);
  const options = { ...base, onProgress: bar.tick };
  try {
    try {
      return await openSend(link, options);
    } catch (err) {
      if (!needsSendPassword(err)) throw err;
    }
    const asks = process.stdin.isTTY === true && sources.file === undefined && sources.env === undefined;
    for (let tried = 1; ; tried++) {
      const password = await sendPassword(sources);
      try {
        return await openSend(link, { ...options, password });
      } catch (err) {
        if (!needsSendPassword(err)) throw err;
        if (!asks || tried === TRIES)
          throw new ApiError(401, "UNAUTHORIZED", "that password does not open this send (no view was taken)", "passwordProof");
        process.stderr.write("That password does not open this send.\n");
      }
    }
  } catch (err) {
    throw refusal(err);
  } finally {
    bar.end();
  }
}

/** The send's password: from --password-file, --password-env, the terminal (echo off), else standard input's first line. */
async function sendPassword(sources: PasswordSources): Promise<string> {
  let password: string;
  if (sources.file !== undefined) password = firstLine(fs.readFileSync(sources.file, "utf8"));
  else if (sources.env !== undefined) {
    const value = process.env[sources.env];
    if (value === undefined) usage(`--password-env: ${sources.env} is not set`);
    password = value;
  } else if (process.stdin.isTTY) {
    password = await readPassword({}, "This send's password: ").catch((err: unknown) =>
      err instanceof UsageError && /empty/.test(err.message) ? "" : Promise.reject(err),
    );
  } else {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
    password = firstLine(Buffer.concat(chunks).toString("utf8"));
  }
  if (password === "")
    throw new ApiError(
      401,
      "UNAUTHORIZED",
      "this send has a password: give it with --password-env NAME, --password-file FILE or on standard input, or type it on a terminal (no view was taken)",
      "passwordProof",
    );
  return password;
}

const firstLine = (text: string) => text.split(/\r?\n/, 1)[0] ?? "";

/** The server's refusals, in the words people are shown for them. */
function refusal(err: unknown): unknown {
  if (err instanceof ApiError && err.status === 404)
    return new NotFoundError("this send is gone: it expired, was deleted, or its views are used up (or the link is not whole)");
  if (err instanceof SecurityError && err.code === "SEND_TAMPERED") return new SecurityError(err.code, sentence(err));
  return err;
}

/** Who sent it and what is left of it, on standard error: the text or file alone goes to standard output. */
function sayWhat(s: OpenedSend): void {
  if (!notes.enabled) return;
  const from = s.from === undefined ? "" : ` from ${printable(s.from)} (as the sender sealed it)`;
  // The expiry and the views left are the server's word, printed as such and never as it sent them.
  const left =
    s.viewsLeft === null
      ? ""
      : s.viewsLeft === 0
        ? "; the server says that was its last view"
        : `; the server says ${printable(String(s.viewsLeft))} more views`;
  process.stderr.write(
    `"${printable(s.title)}"${from}: the server says its link opens it until ${printable(String(s.expiresAt))}${left}.\n`,
  );
}

function view(s: OpenedSend) {
  const { file, ...rest } = s;
  return { ...rest, ...(file && { file: { name: file.name, type: file.type, size: file.size } }) };
}

function saved(s: OpenedSend, target: string, size: number): Output {
  const what = s.kind === "file" ? `"${printable(s.file!.name)}"` : "the text";
  return { json: { ...view(s), out: target }, text: `Saved ${what} (${fileSizeText(size)}) to ${printable(target)}.` };
}

/**
 * On a terminal a text is shown with its control characters (but line ends and tabs) as U+FFFD,
 * so that a sender's escape sequences cannot act on it; piped, it is the text exactly.
 */
function shownText(text: string): string {
  if (!process.stdout.isTTY) return text;
  return text
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => line.split("\t").map(printable).join("\t"))
    .join("\n");
}

/**
 * The name to save under: the file's (its last path part, without control characters: it is the
 * sender's word), or one made of the send's id. Known only once the view is taken, so a name in use
 * is never a refusal that would lose it: `name (2).ext` instead, unless --force.
 */
function ownName(s: OpenedSend): string {
  // No control, direction-override or other unprintable character (a name that reads as another), none a file system refuses.
  const cleaned = printable(path.basename((s.file?.name ?? "").replace(/\\/g, "/")))
    .replace(/[\uFFFD:*?"<>|]/g, "")
    .trim();
  const base = withinBytes(cleaned, MAX_NAME_BYTES);
  if (base !== "" && base !== "." && base !== "..") return base;
  return `send-${s.sendId.slice(0, 8)}${s.kind === "text" ? ".txt" : ""}`;
}

/** Room for the temporary name a save writes first (`.<name>.<12 hex>.part`) within a file system's 255 bytes. */
const MAX_NAME_BYTES = 200;

/** The name cut to `max` UTF-8 bytes, keeping its extension where it is short, never in the middle of a character. */
function withinBytes(name: string, max: number): string {
  const bytes = (t: string) => Buffer.byteLength(t, "utf8");
  if (bytes(name) <= max) return name;
  const ext = path.extname(name);
  const keep = bytes(ext) <= 16 ? ext : "";
  let stem = name.slice(0, name.length - keep.length);
  while (bytes(stem) + bytes(keep) > max) stem = Array.from(stem).slice(0, -1).join("");
  return stem + keep;
}

function placeIn(dir: string, name: string, force: boolean): string {
  if (force) return path.resolve(dir, name);
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 1; ; n++) {
    const target = path.resolve(dir, n === 1 ? name : `${stem} (${n})${ext}`);
    if (!exists(target)) return target;
  }
}

const isDirectory = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
const exists = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;

/** A file's parts as they are read, on standard error (on a terminal, or with --progress). */
function partProgress(enabled: boolean): { tick: (done: number, parts: number) => void; end: () => void } {
  const tty = process.stderr.isTTY === true;
  let drawn = false;
  return {
    tick: (done, parts) => {
      if (!enabled) return;
      const line = `receiving part ${done} of ${parts}`;
      if (tty) {
        process.stderr.write(`\r${line}\x1b[K`);
        drawn = true;
      } else if (done === parts || done % Math.max(1, Math.round(parts / 10)) === 0) process.stderr.write(`${line}\n`);
    },
    end: () => {
      if (drawn) process.stderr.write("\n");
    },
  };
}

/**
 * The server a link names, where the open goes unless --server says otherwise: an http(s) address
 * with no credentials, query or odd port text, so that a crafted link cannot point the CLI at
 * something that is not a web vault (a local service, another scheme).
 */
function checkLinkServer(base: string): void {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    usage("the link does not name a web vault's address: open it with --server <address>");
  }
  if ((url!.protocol !== "https:" && url!.protocol !== "http:") || url!.username || url!.password || url!.search)
    usage(`the link names ${printable(base)}, which is not a web vault's address: open it with --server <address> if you trust it`);
}
