/**
 * `npm run bench`: the product against baselines measured in the same run, the load generator
 * (autocannon) in this process. It ends with a summary: each headline figure beside its floor,
 * with the issue's target where there is one (common.ts `figure`). BENCH_PARTS picks the parts (default: single,split,audit,metrics,web,webteam,account,bodies,itemlog,password,rotation,items,factors,start,autofill,files):
 * - single: one process on the embedded store (bench/single.ts);
 * - split: one process per service over NATS, on PostgreSQL and Redis (bench/split.ts);
 * - audit: item creates with and without the audit worker, in both deployments (bench/audit.ts);
 * - metrics: GET /vaults with metrics off and on, alternating, medians (bench/metrics.ts);
 * - web: the web vault's gzipped JavaScript and the unlock in Chromium (bench/web.ts);
 * - webteam: the web vault at a team's size in Chromium: a 2,000-item vault opened, the first search keystroke across 4,000 items (bench/web-team.ts);
 * - account: login and unlock through the SDK, against the bare KDF (bench/account.ts);
 * - factors: a login with a second step, against a plain login (bench/factors.ts);
 * - start: spawning the built server, its time to first answer and its RSS, against a bare node:http server (bench/start.ts);
 * - bodies: the worst rekey bodies' peak RSS, and rekeys against an earlier build (bench/bodies.ts);
 * - password: a master password change for a user with 200 personal vaults, against the bare KDFs (bench/password.ts).
 * - rotation: a key rotation for a member of 200 shared vaults, against the bare key generation and RSA work (bench/rotation.ts).
 * - items: search over 10,000 items, an import of 5,000, opening a vault with history, each against a floor (bench/items.ts).
 * - autofill: the logins matching a page among 10,000, and building their index, against a bare loop (bench/autofill.ts);
 *   in Chromium with the extension, a click into a login field to the menu listing its login, against the bare loop and a
 *   plain frame drawn on a click, unlock to the popup's list, and the popup's and menu's JavaScript (bench/autofill-browser.ts).
 * - files: a 100 MiB file up and down through the SDK, embedded and split, MB/s and peak RSS growth,
 *   against a bare node:http server taking and giving the same chunk requests (bench/files.ts).
 */
import { itemLogCost } from "./item-log";
import os from "node:os";
import { CONNECTIONS, DURATION, PIN, summaryLines } from "./common";
import { singleProcess } from "./single";
import { splitDeployment } from "./split";
import { auditOverhead } from "./audit";
import { webVault } from "./web";
import { metricsCost } from "./metrics";
import { accountFlows } from "./account";
import { factorFlows } from "./factors";
import { startCosts } from "./start";
import { rekeyBodies } from "./bodies";
import { passwordChange } from "./password";
import { keyRotation } from "./rotation";
import { itemsBench } from "./items";
import { autofillLookup } from "./autofill";
import { webTeam } from "./web-team";
import { filesBench } from "./files";

const PARTS: Record<string, () => Promise<void>> = {
  single: singleProcess,
  split: splitDeployment,
  audit: auditOverhead,
  metrics: metricsCost,
  web: webVault,
  account: accountFlows,
  factors: factorFlows,
  start: startCosts,
  bodies: rekeyBodies,
  itemlog: itemLogCost,
  password: passwordChange,
  rotation: keyRotation,
  items: itemsBench,
  autofill: autofillLookup,
  webteam: webTeam,
  files: filesBench,
};

async function main(): Promise<void> {
  const parts = (
    process.env.BENCH_PARTS ??
    "single,split,audit,metrics,web,webteam,account,bodies,itemlog,password,rotation,items,factors,start,autofill,files"
  )
    .split(",")
    .map((p) => p.trim());
  const unknown = parts.filter((p) => !(p in PARTS));
  if (unknown.length) throw new Error(`BENCH_PARTS: unknown part(s) ${unknown.join(", ")}`);
  console.log(`node ${process.version}, ${os.cpus().length} cores (${PIN.label}), ${CONNECTIONS} connections, ${DURATION} s per run\n`);
  for (const p of parts) await PARTS[p]!();
  for (const line of summaryLines()) console.log(line);
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
