#!/usr/bin/env node
/**
 * `vaultctl`: the command line client of the vault service, on the SDK in `sdk/`. Everything is
 * encrypted, wrapped and signed here; the server sees ciphertext. `vaultctl --help` lists the
 * commands, `vaultctl <command> --help` explains one.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { commands, type Command, type OptionSpec } from "./commands";
import { notes } from "./commands/shared";
import { Context, DEFAULT_SERVER } from "./context";
import { EXIT, printOutput, reportError, UsageError } from "./output";
import { CliState, cliHome } from "./state";
import { didYouMean } from "./suggest";

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  server: {
    type: "string",
    value: "URL",
    description: `the server's address, with or without /api/v1 (env VAULT_SERVER; default: the saved login's, else ${DEFAULT_SERVER})`,
  },
  json: { type: "boolean", description: "machine-readable output on stdout (errors as JSON on stderr)" },
  "password-file": { type: "string", value: "FILE", description: "read the master password from the first line of FILE" },
  "password-env": { type: "string", value: "NAME", description: "read the master password from environment variable NAME" },
  session: { type: "string", value: "VALUE", description: "a session value from `vaultctl unlock` (env VAULT_SESSION)" },
  progress: { type: "boolean", description: "show progress on stderr even when it is not a terminal" },
  help: { type: "boolean", description: "show help" },
  version: { type: "boolean", description: "show vaultctl's version" },
};

/** `vaultctl 0.1.0 (node v24.x)`: the version of the package this file belongs to. */
function version(): string {
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (fs.existsSync(file)) return `vaultctl ${JSON.parse(fs.readFileSync(file, "utf8")).version} (node ${process.version})\n`;
  }
  return `vaultctl (node ${process.version})\n`;
}

async function main(argv: string[]): Promise<number> {
  const jsonWanted = argv.includes("--json");
  try {
    const { command, rest } = findCommand(argv);
    if (!command) {
      if (argv.includes("--version") || argv.includes("-V") || rest[0] === "version") {
        process.stdout.write(version());
        return EXIT.ok;
      }
      if (rest.length === 0 || argv.includes("--help") || argv.includes("-h") || rest[0] === "help") {
        process.stdout.write(overview());
        return EXIT.ok;
      }
      // A mistyped first word ("rekee"), or a known group with a mistyped second ("vault lst").
      const group = commands.filter((c) => c.path.length > 1 && c.path[0] === rest[0]);
      const spelled = group.length > 0 ? rest.slice(0, 2).join(" ") : rest[0]!;
      const known = group.length > 0 ? group.map((c) => c.path.join(" ")) : [...new Set(commands.map((c) => c.path[0]!))];
      throw new UsageError(`unknown command: ${spelled}${didYouMean(spelled, known, (s) => `vaultctl ${s}`)} (vaultctl --help lists them)`);
    }
    const options = { ...GLOBAL_OPTIONS, ...command.options };
    const { values, positionals } = parseArgs({
      args: normalizeArgs(rest, options),
      options: Object.fromEntries(Object.entries(options).map(([name, o]) => [name, { type: o.type, multiple: o.multiple ?? false }])),
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    });
    if (values.help) {
      process.stdout.write(commandHelp(command));
      return EXIT.ok;
    }
    if (values.version) {
      process.stdout.write(version());
      return EXIT.ok;
    }
    const required = command.args.filter((a) => !a.endsWith("?>")).length;
    // A last argument written `<name...>` takes one or more.
    const variadic = command.args.at(-1)?.endsWith("...>") === true;
    if (positionals.length < required || (!variadic && positionals.length > command.args.length)) {
      throw new UsageError(`usage: vaultctl ${command.path.join(" ")} ${command.args.join(" ")} (see --help)`);
    }
    const ctx = new Context(
      new CliState(cliHome()),
      (values.server as string | undefined) ?? process.env.VAULT_SERVER,
      values.json === true,
      values.progress === true || (process.stderr.isTTY === true && values.json !== true),
      { passwordFile: values["password-file"] as string | undefined, passwordEnv: values["password-env"] as string | undefined },
      (values.session as string | undefined) ?? process.env.VAULT_SESSION,
    );
    notes.enabled = !ctx.json;
    const out = await command.run(ctx, positionals, values);
    printOutput(out, ctx.json);
    return out.exitCode ?? EXIT.ok;
  } catch (err) {
    // parseArgs reports unknown options and missing values as TypeErrors with a code.
    const usageError = (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? optionError(err as Error, argv) : err;
    return reportError(usageError, jsonWanted);
  }
}

/** parseArgs's own message, in vaultctl's words, with the closest known option. */
function optionError(err: Error, argv: string[]): UsageError {
  const { command } = findCommand(argv);
  const where = command ? `vaultctl ${command.path.join(" ")}` : "vaultctl";
  const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(err.message)?.[1];
  if (unknown) {
    const names = Object.keys({ ...GLOBAL_OPTIONS, ...command?.options }).map((n) => `--${n}`);
    return new UsageError(`unknown option ${unknown} for ${where}${didYouMean(unknown, names, (s) => s)} (${where} --help lists them)`);
  }
  const missing = /Option '(-{1,2}[^ ']+)[^']*' argument missing/.exec(err.message)?.[1];
  if (missing) return new UsageError(`${missing} needs a value (${where} --help)`);
  return new UsageError(`${err.message} (${where} --help)`);
}

/**
 * Invite tokens and other values are base64url and may begin with "-". Known options take the
 * next word as their value whatever it starts with; a word that is not an option's name is a
 * positional. Only `--lowercase-words` are taken for (possibly unknown) options, `-h` for help, and
 * the one-letter name a command's option declares (`-o` for `download --out`).
 */
function normalizeArgs(args: string[], options: Record<string, OptionSpec>): string[] {
  const flags: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const given = args[i]!;
    if (given === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (given === "-h") {
      flags.push("--help");
      continue;
    }
    const short = Object.entries(options).find(([, o]) => o.short !== undefined && given === `-${o.short}`)?.[0];
    const arg = short !== undefined ? `--${short}` : given;
    const name = /^--([a-z][a-z0-9-]*)(=|$)/.exec(arg)?.[1];
    if (name === undefined) positionals.push(arg);
    else if (name !== undefined && options[name]?.type === "string" && !arg.includes("=") && i + 1 < args.length)
      flags.push(`${arg}=${args[++i]}`);
    else flags.push(arg);
  }
  return [...flags, "--", ...positionals];
}

/** The longest command path spelled by the leading words (global options may come first). */
function findCommand(argv: string[]): { command?: Command; rest: string[] } {
  const words: number[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const arg = argv[i]!;
    if (arg.startsWith("-")) {
      const name = arg.replace(/^--?/, "");
      if (GLOBAL_OPTIONS[name]?.type === "string") i++;
      continue;
    }
    words.push(i);
  }
  const spelled = words.map((i) => argv[i]!);
  const command = commands.filter((c) => c.path.every((p, i) => spelled[i] === p)).sort((a, b) => b.path.length - a.path.length)[0];
  if (!command) return { rest: spelled };
  const used = new Set(words.slice(0, command.path.length));
  return { command, rest: argv.filter((_, i) => !used.has(i)) };
}

function formatOptions(options: Record<string, OptionSpec>): string {
  const rows = Object.entries(options).map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : ""}--${name}${o.value ? ` ${o.value}` : ""}`,
    o.description,
  ]);
  const width = Math.max(...rows.map((r) => r[0]!.length));
  return rows.map(([flag, text]) => `  ${flag!.padEnd(width)}  ${text}`).join("\n");
}

function commandHelp(c: Command): string {
  const parts = [`usage: vaultctl ${[...c.path, ...c.args].join(" ")} [options]`, "", c.summary, ""];
  if (c.options) parts.push("Options:", formatOptions(c.options), "");
  parts.push("Global options:", formatOptions(GLOBAL_OPTIONS), "");
  return parts.join("\n");
}

function overview(): string {
  const rows = commands.map((c) => [`${[...c.path, ...c.args].join(" ")}`, c.summary]);
  const width = Math.max(...rows.map((r) => r[0]!.length));
  return [
    "vaultctl: the command line client of the zero-knowledge vault service.",
    "Keys are generated, wrapped and signed on this machine; the server stores ciphertext.",
    "",
    "Commands:",
    ...rows.map(([usage, summary]) => `  ${usage!.padEnd(width)}  ${summary}`),
    "",
    "Global options:",
    formatOptions(GLOBAL_OPTIONS),
    "",
    "Exit codes: 0 done, 1 refused or failed, 2 wrong usage, 3 a security check failed.",
    "State (login, pins, session) lives in VAULTCTL_HOME, else ~/.config/vaultctl, files mode 0600.",
    "",
  ].join("\n");
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
