/**
 * The master password, from (first match): `--password-file`, `--password-env NAME`, standard
 * input when it is not a terminal (first line), or a prompt on the terminal with echo off.
 * It is used to derive keys and then dropped; nothing writes it anywhere.
 */
import fs from "node:fs";
import { createInterface } from "node:readline/promises";
import { CancelledError, UsageError } from "./output";

export interface PasswordSources {
  passwordFile?: string;
  passwordEnv?: string;
}

let stdinText: Promise<string> | undefined;
const stdinLine = async (n: number) => (await (stdinText ??= readAll(process.stdin))).split(/\r?\n/)[n] ?? "";

export async function readPassword(sources: PasswordSources, prompt: string, opts: { confirm?: boolean } = {}): Promise<string> {
  let password: string;
  if (sources.passwordFile) password = firstLine(fs.readFileSync(sources.passwordFile, "utf8"));
  else if (sources.passwordEnv) {
    const value = process.env[sources.passwordEnv];
    if (value === undefined) throw new UsageError(`--password-env: ${sources.passwordEnv} is not set`);
    password = value;
  } else if (!process.stdin.isTTY) {
    password = await stdinLine(0);
  } else {
    password = await promptHidden(prompt);
    if (opts.confirm && (await promptHidden("Repeat it: ")) !== password) throw new UsageError("the two passwords differ");
  }
  if (password.length === 0) throw new UsageError("the master password is empty");
  return password;
}

/**
 * A new master password (a password change), from `--new-password-file`, `--new-password-env
 * NAME`, the second line of standard input when it is not a terminal (the first is the current
 * one), or a prompt, typed twice.
 */
export async function readNewPassword(sources: { file?: string; env?: string }, prompt: string): Promise<string> {
  let password: string;
  if (sources.file) password = firstLine(fs.readFileSync(sources.file, "utf8"));
  else if (sources.env) {
    const value = process.env[sources.env];
    if (value === undefined) throw new UsageError(`--new-password-env: ${sources.env} is not set`);
    password = value;
  } else if (!process.stdin.isTTY) password = await stdinLine(1);
  else {
    password = await promptHidden(prompt);
    if ((await promptHidden("Repeat it: ")) !== password) throw new UsageError("the two passwords differ");
  }
  if (password.length === 0) throw new UsageError("the new master password is empty");
  return password;
}

function firstLine(text: string): string {
  return text.split(/\r?\n/, 1)[0] ?? "";
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk;
  return text;
}

/** Reads a line from the terminal in raw mode, echoing nothing. Ctrl-C aborts. */
function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    let value = "";
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003") return done(new UsageError("cancelled"));
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

/**
 * "Are you sure?" before a change others rely on. On a terminal it asks (y/N); elsewhere nobody
 * can answer, so a script must say `--yes`.
 */
export async function confirmOrStop(question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY)
    throw new UsageError(`${question.replace(/\?$/, "")}: standard input is not a terminal, so vaultctl cannot ask; add --yes`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new CancelledError("cancelled: nothing was changed");
  } finally {
    rl.close();
  }
}

/** A short answer typed on the terminal (a second-factor code); elsewhere nobody can type it, so the command says which option gives it. */
/**
 * A yes-or-no question on the terminal (no by default); off a terminal, no question and no: the
 * caller says what that leaves undone, and which option asks for it.
 */
export async function askYesNo(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export async function askLine(question: string, option: string): Promise<string> {
  if (!process.stdin.isTTY)
    throw new UsageError(`${question.replace(/[:?]\s*$/, "")}: standard input is not a terminal; give it with ${option}`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}
