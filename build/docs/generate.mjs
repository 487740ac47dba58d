/**
 * `npm run docs:generate`: writes every generated page from the code, with no build:
 *   - docs/api/refusals.md, the refusal catalogue (refusals.mjs);
 *   - docs/api/reference.md, the API reference (reference.mjs);
 *   - the settings table of docs/operator/configuration.md and `.env.template` (lib/config-docs.ts,
 *     as `npm run settings` writes them).
 * `--check` writes nothing and exits 1 naming each page that differs; `--json` prints every page
 * as one JSON object, path -> text (test/unit/docs/generated.test.ts compares them).
 */
import fs from "node:fs";
import path from "node:path";
import { REFERENCE_PAGE, readReference, referencePage } from "./reference.mjs";
import { REFUSALS_PAGE, readRefusals, refusalFiles, refusalsPage } from "./refusals.mjs";
import { ROUTE_ROOTS } from "./route-errors.mjs";
import { ROOT, requireSource, sourceProgram } from "./sources.mjs";

/** Every generated file, path -> its text as the code writes it now. */
function generatedPages() {
  const program = sourceProgram([...refusalFiles().map((f) => f.file), ...ROUTE_ROOTS()]);
  const catalogue = readRefusals(program);
  const settings = requireSource("lib/config-docs.ts");
  const settingsPage = fs.readFileSync(path.join(ROOT, settings.SETTINGS_DOC), "utf8");
  return {
    [REFUSALS_PAGE]: refusalsPage(catalogue),
    [REFERENCE_PAGE]: referencePage(readReference(program, catalogue)),
    [settings.SETTINGS_DOC]: settings.readmeWithSettings(settingsPage),
    ".env.template": settings.envTemplate(),
  };
}

function main(args) {
  const pages = generatedPages();
  if (args.includes("--json")) return void process.stdout.write(JSON.stringify(pages));
  const stale = Object.entries(pages).filter(([file, text]) => {
    const full = path.join(ROOT, file);
    return !fs.existsSync(full) || fs.readFileSync(full, "utf8") !== text;
  });
  if (args.includes("--check")) {
    for (const [file] of stale) console.log(`${file} is not what npm run docs:generate writes: run it`);
    process.exitCode = stale.length > 0 ? 1 : 0;
    return;
  }
  for (const [file, text] of stale) {
    fs.writeFileSync(path.join(ROOT, file), text);
    console.log(`${file} written`);
  }
  if (stale.length === 0) console.log("Every generated page is current");
}

main(process.argv.slice(2));
