// Lints an OpenAPI document read from standard input with Redocly's recommended rules, and prints
// the problems found as JSON (an empty array when there is none). An .mjs of its own: the
// linter is ESM only, and jest runs the tests as CommonJS.
import { createConfig, lintFromString } from "@redocly/openapi-core";

let source = "";
for await (const chunk of process.stdin) source += chunk;
// One rule off: the service is UNLICENSED (package.json), a license with neither an SPDX
// identifier nor a URL, which is what info-license-strict asks for.
const config = await createConfig({ extends: ["recommended"], rules: { "info-license-strict": "off" } });
const problems = await lintFromString({ source, absoluteRef: "openapi.json", config });
process.stdout.write(
  JSON.stringify(problems.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, where: p.location?.[0]?.pointer }))),
);
