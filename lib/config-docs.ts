/**
 * The operators' settings table (docs/operator/configuration.md) and `.env.template`, written from
 * the settings table (lib/config/). `npm run settings` writes both; test/unit/lib/config.test.ts fails when
 * either is stale.
 */
import { SETTING_GROUPS, SETTINGS, type SettingGroup } from "./config";

const rows = () => Object.values(SETTINGS) as Array<(typeof SETTINGS)[keyof typeof SETTINGS]>;

/** The page that holds the settings table, from the repository's root. */
export const SETTINGS_DOC = "docs/operator/configuration.md";

export const README_TABLE_BEGIN = "<!-- settings table: written by `npm run settings` from lib/config/ -->";
export const README_TABLE_END = "<!-- end of settings table -->";

export function settingsMarkdownTable(): string {
  const lines = ["| setting | default | meaning |", "|---|---|---|"];
  for (const s of rows()) lines.push(`| \`${s.env}\` | ${s.shown} | ${s.meaning.replace(/\|/g, "\\|")} |`);
  return lines.join("\n");
}

/** The settings page (SETTINGS_DOC) with its table (between the markers) replaced by the current one. */
export function readmeWithSettings(readme: string): string {
  const begin = readme.indexOf(README_TABLE_BEGIN);
  const end = readme.indexOf(README_TABLE_END);
  if (begin < 0 || end < begin) throw new Error(`${SETTINGS_DOC} has no settings table markers`);
  return `${readme.slice(0, begin + README_TABLE_BEGIN.length)}\n${settingsMarkdownTable()}\n${readme.slice(end)}`;
}

export function envTemplate(): string {
  const out = [
    "# Every setting of the service with its default, written by `npm run settings` from lib/config/.",
    "# None is needed: with no settings the service runs in one process on the embedded store.",
  ];
  for (const [group, title] of Object.entries(SETTING_GROUPS) as Array<[SettingGroup, string]>) {
    out.push("", `# --- ${title} ---`);
    for (const s of rows().filter((r) => r.group === group)) {
      out.push(...wrap(plain(s.meaning), 98).map((l) => `# ${l}`));
      const row = s as { template?: string; example?: string };
      out.push(row.template !== undefined ? `${s.env}=${row.template}` : `# ${s.env}=${row.example ?? ""}`);
    }
  }
  return `${out.join("\n")}\n`;
}

/** Markdown to plain text: code spans lose their backticks. */
function plain(markdown: string): string {
  const text = markdown.replace(/`([^`]*)`/g, "$1");
  return text.charAt(0).toUpperCase() + text.slice(1) + (text.endsWith(".") ? "" : ".");
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
