/**
 * Sends: a text or a file shared with anyone by a link whose fragment is its key (the SDK part:
 * client.sends; opening one: send-open.ts). A text is read from standard input, never from the
 * command line, so that it lands in no shell history; so is no password: it is asked on the
 * terminal, or read from a file or an environment variable the command names.
 */
import fs from "node:fs";
import path from "node:path";
import { ApiError, parseSendLink, printable } from "../../sdk";
import type { MadeSend, SendContent, SendOptions, SendSummary } from "../../sdk/client";
import { SEND_PART_BYTES } from "../../protocol/formats/sends";
import { byteProgress } from "../file-io";
import { NotFoundError, table, type Output } from "../output";
import { confirmOrStop, readPassword } from "../password";
import { sendOpenCommand } from "./send-open";
import { type Command, type OptionSpec, YES_OPTION, notes, usage } from "./shared";

/** What `send text` and `send file` both take. */
const MAKE_OPTIONS: Record<string, OptionSpec> = {
  title: { type: "string", value: "TITLE", description: 'what the recipient sees it called (default: the file\'s name, or "A secret")' },
  expires: {
    type: "string",
    value: "DURATION",
    description: "how long its link opens it, e.g. 1h, 3d (default 7d; the server's and the organization's caps apply)",
  },
  views: { type: "string", value: "N", description: "how many times its link opens it, at most (default: no cap)" },
  "password-prompt": { type: "boolean", description: "ask for a password the recipient must type too (on the terminal, twice)" },
  "send-password-file": { type: "string", value: "FILE", description: "that password from the first line of FILE (for scripts)" },
  "send-password-env": { type: "string", value: "NAME", description: "that password from the environment variable NAME (for scripts)" },
  "show-email": { type: "boolean", description: "name you (your email) as its sender, sealed with it" },
};

export const sendCommands: Command[] = [
  {
    path: ["send", "text"],
    args: [],
    summary: "Share a text (read from standard input) by a link that alone holds its key; prints the link",
    options: MAKE_OPTIONS,
    async run(ctx, _args, opts) {
      const settings = makeSettings(opts);
      if (!process.stdin.isTTY && !(opts.session ?? process.env.VAULT_SESSION) && !opts["password-file"] && !opts["password-env"])
        usage(
          "standard input carries the text, so it cannot carry the master password too: unlock first (`vaultctl unlock`, VAULT_SESSION), or give it with --password-file or --password-env",
        );
      const client = await ctx.unlocked();
      const password = await newSendPassword(opts);
      const made = await client.sends.create({ text: await readText() }, { ...settings, ...(password !== undefined && { password }) });
      return madeOutput(made, settings, password !== undefined);
    },
  },
  {
    path: ["send", "file"],
    args: ["<path>"],
    summary: "Share a file by a link that alone holds its key, sealed here in parts; prints the link",
    options: MAKE_OPTIONS,
    async run(ctx, [file], opts) {
      const settings = makeSettings(opts);
      const content = readFileContent(file!);
      const client = await ctx.unlocked();
      const password = await newSendPassword(opts);
      const size = content.file.data.length;
      const bar = byteProgress(ctx.progress, `sending ${printable(content.file.name)}`);
      let made: MadeSend;
      try {
        made = await client.sends.create(content, {
          ...settings,
          ...(password !== undefined && { password }),
          // Part 0 is the header; the file's bytes are parts 1.., each SEND_PART_BYTES but the last.
          onProgress: (sent) => bar(Math.min(size, Math.max(0, sent - 1) * SEND_PART_BYTES), size),
        });
      } finally {
        bar.end();
      }
      return madeOutput(made, settings, password !== undefined);
    },
  },
  {
    path: ["send", "list"],
    args: [],
    summary: "Your sends, newest first, until they expire: title, kind, views, expiry, password, state and link",
    async run(ctx) {
      const sends = await (await ctx.unlocked()).sends.list();
      return {
        json: sends,
        text: table(
          ["ID", "TITLE", "KIND", "VIEWS", "EXPIRES", "PASSWORD", "STATE", "LINK"],
          sends.map((s) => [
            s.sendId,
            s.title ?? "(note does not open)",
            s.kind ?? "?",
            `${s.views}/${s.maxViews ?? "any"}`,
            s.expiresAt,
            s.hasPassword ? "yes" : "no",
            stateOf(s),
            s.link ?? "(sealed under keys you rotated since: none)",
          ]),
        ),
      };
    },
  },
  {
    path: ["send", "delete"],
    args: ["<send>"],
    summary: "Delete a send (by id or link) and its parts at once: its link opens nothing more",
    options: { yes: YES_OPTION },
    async run(ctx, [ref], opts) {
      const sendId = (parseSendLink(ref!)?.sendId ?? ref!).toLowerCase();
      const client = ctx.loggedIn();
      await confirmOrStop(`Delete send ${sendId}? Its link stops opening it.`, opts.yes === true);
      try {
        await client.sends.remove(sendId);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404)
          throw new NotFoundError(`no send ${sendId} of yours (it may have expired; \`vaultctl send list\` shows them)`);
        throw err;
      }
      return { json: { deleted: sendId }, text: `Deleted send ${sendId}: its link opens nothing more.` };
    },
  },
  sendOpenCommand,
];

type MakeSettings = Pick<SendOptions, "title" | "expiresIn" | "maxViews" | "showEmail">;

function makeSettings(opts: Record<string, unknown>): MakeSettings {
  const title = opts.title as string | undefined;
  if (title !== undefined && title.trim() === "") usage("--title: a title is not blank");
  const views = opts.views as string | undefined;
  if (views !== undefined && !/^[1-9][0-9]{0,8}$/.test(views)) usage(`--views takes a whole number from 1, not ${views}`);
  return {
    ...(title !== undefined && { title }),
    ...(opts.expires !== undefined && { expiresIn: opts.expires as string }),
    ...(views !== undefined && { maxViews: Number(views) }),
    ...(opts["show-email"] === true && { showEmail: true }),
  };
}

/** The send's password, when one of the three password options asks for one; never the command line's own words. */
async function newSendPassword(opts: Record<string, unknown>): Promise<string | undefined> {
  const file = opts["send-password-file"] as string | undefined;
  const env = opts["send-password-env"] as string | undefined;
  const prompt = opts["password-prompt"] === true;
  if ([file !== undefined, env !== undefined, prompt].filter(Boolean).length > 1)
    usage("--password-prompt, --send-password-file and --send-password-env each give the password: use one");
  let password: string | undefined;
  if (file !== undefined) password = fs.readFileSync(file, "utf8").split(/\r?\n/, 1)[0] ?? "";
  else if (env !== undefined) {
    password = process.env[env];
    if (password === undefined) usage(`--send-password-env: ${env} is not set`);
  } else if (prompt) {
    if (!process.stdin.isTTY) usage("--password-prompt asks on a terminal; in a script give --send-password-file or --send-password-env");
    password = await readPassword({}, "A password for this send: ", { confirm: true }).catch((err: unknown) =>
      err instanceof Error && /empty/.test(err.message) ? "" : Promise.reject(err),
    );
  }
  if (password === "") usage("the send's password is empty");
  return password;
}

/** Standard input as the text: UTF-8, one line end at its very end dropped (as `echo` and editors add one). */
async function readText(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Type the text, then Ctrl-D on a line of its own:\n");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : (chunk as Buffer));
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    usage("standard input is not UTF-8 text: share it with `vaultctl send file`");
  }
  text = text.replace(/\r?\n$/, "");
  if (text === "") usage("no text on standard input: e.g. `vaultctl send text < note.txt`");
  return text;
}

function readFileContent(file: string): Extract<SendContent, { file: unknown }> {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) throw new NotFoundError(`no file ${file}`);
  if (!stat.isFile()) usage(`${file} is not a file`);
  return { file: { name: path.basename(file), data: new Uint8Array(fs.readFileSync(file)) } };
}

/** The link alone on standard output (for `$(...)`); what it is, on standard error. */
function madeOutput(made: MadeSend, settings: MakeSettings, hasPassword: boolean): Output {
  const views = settings.maxViews === undefined ? "" : `, or after ${settings.maxViews === 1 ? "one view" : `${settings.maxViews} views`}`;
  if (notes.enabled)
    process.stderr.write(
      `Send ${made.sendId}: its link opens it until ${made.expiresAt}${views}. The link is its key: share it with the recipient only${
        hasPassword ? ", and the password apart from it" : ""
      }.\n`,
    );
  return {
    json: { sendId: made.sendId, link: made.link, expiresAt: made.expiresAt, maxViews: settings.maxViews ?? null, hasPassword },
    text: made.link,
  };
}

function stateOf(s: SendSummary): string {
  if (!s.complete) return "unfinished";
  if (s.partsGone || (s.maxViews !== null && s.views >= s.maxViews)) return "used up";
  return "open";
}
