/**
 * Password health: the logins, in every vault the person can open, whose password is weak, used by
 * another login, or not changed for a long time (sdk/health.ts). Computed here in the browser from
 * the opened items; only names, ids and dates are kept for the page, never a password.
 */
import { useEffect, useState } from "preact/hooks";
import {
  checkMasterPassword,
  DEFAULT_OLD_AFTER_DAYS,
  passwordHealth,
  sentence,
  VaultListChanged,
  type CheckedVault,
  type HealthCounts,
  type HealthProblem,
  type HealthReport,
  type Item,
} from "../../../sdk";
import { currentClient, useRefresh } from "../session";
import { Busy, ErrorNote, useAction } from "../components/ui";
import { NameFlag } from "../components/name-flag";

/** Days after which a password counts as old: from localStorage (a test or an admin changes it; 0 allowed), else a year. */
function oldPasswordDays(): number {
  const value = Number(localStorage.getItem("vault.oldPasswordDays") ?? NaN);
  return Number.isFinite(value) && value >= 0 ? value : DEFAULT_OLD_AFTER_DAYS;
}

interface Checked {
  report: HealthReport;
  /** The vaults whose items were read. */
  vaults: CheckedVault[];
  /** The vaults that could not be opened, each with why. */
  skipped: Array<{ vaultId: string; name: string; why: string }>;
  oldAfterDays: number;
}

export function Health() {
  const [checked, setChecked] = useState<Checked | null>(null);
  const load = useAction();
  const refresh = useRefresh();
  useEffect(() => void load.run(async () => setChecked(await checkHealth())), [refresh]);
  return (
    <main>
      <h1>Password health</h1>
      <p>
        Logins whose password is weak, used by another login, or not changed for a long time, in every vault you can open. Checked here in
        your browser: no password leaves it, and none is shown.
      </p>
      {load.busy && <Busy label="Checking your passwords…" />}
      <ErrorNote error={load.error} />
      {checked && <HealthResult checked={checked} />}
    </main>
  );
}

function HealthResult({ checked: { report, vaults, skipped, oldAfterDays } }: { checked: Checked }) {
  const vaultName = (id: string) => vaults.find((v) => v.vaultId === id)?.nameCheck.name ?? id;
  return (
    <>
      <p role="status">
        {report.overall.checked === 0
          ? "No login with a password to check."
          : `In all: ${countsText(report.overall, oldAfterDays)}${report.overall.affected === 0 ? " Nothing to fix." : ""}`}
      </p>
      {skipped.length > 0 && (
        <section class="warning" aria-label="Vaults not checked">
          <p>Not checked, as they could not be opened:</p>
          <ul>
            {skipped.map((s) => (
              <li key={s.vaultId}>
                {s.name}: {s.why}
              </li>
            ))}
          </ul>
        </section>
      )}
      {vaults.map((v) => (
        <VaultHealth key={v.vaultId} vault={v} report={report} oldAfterDays={oldAfterDays} vaultName={vaultName} />
      ))}
    </>
  );
}

/** One vault: its counts, and each login to fix with why, linked to the item. */
function VaultHealth(props: { vault: CheckedVault; report: HealthReport; oldAfterDays: number; vaultName(id: string): string }) {
  const { vault, report } = props;
  const counts = report.vaults.find((c) => c.vaultId === vault.vaultId);
  const toFix = report.items.filter((i) => i.vaultId === vault.vaultId);
  const headingId = `health-${vault.vaultId}`;
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {vault.nameCheck.name} <NameFlag check={vault.nameCheck} />
      </h2>
      <p>{counts ? countsText(counts, props.oldAfterDays) : "No login with a password."}</p>
      {toFix.length > 0 && (
        <ul class="list" aria-label={`Logins to fix in ${vault.nameCheck.name}`}>
          {toFix.map((i) => (
            <li key={i.itemId}>
              <a href={`#/vault/${i.vaultId}/${i.itemId}`}>{i.name}</a>{" "}
              <span class="meta">{i.problems.map((p) => reason(p, vault.vaultId, props.vaultName)).join("; ")}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function countsText(c: HealthCounts, oldAfterDays: number): string {
  return `${plural(c.checked, "login")} checked: ${c.weak} weak, ${c.reused} reused, ${c.old} not changed in ${plural(oldAfterDays, "day")}.`;
}

/** Why a login is listed, in words; the other logins of a reused password by name (and vault, when another). */
function reason(p: HealthProblem, vaultId: string, vaultName: (id: string) => string): string {
  if (p.kind === "weak") return `weak (strength ${p.score} of 4)`;
  if (p.kind === "old") return `not changed since ${new Date(p.since).toLocaleDateString()}`;
  const names = p.with.map((o) => (o.vaultId === vaultId ? o.name : `${o.name} (in ${vaultName(o.vaultId)})`));
  return `reused with ${names.join(", ")}`;
}

/** Reads every vault on the vault list, opens its items and computes the report; the passwords stay in this function. */
async function checkHealth(): Promise<Checked> {
  const client = currentClient();
  let listed: CheckedVault[];
  try {
    listed = await client.vaults.listChecked();
  } catch (err) {
    // Vaults the server no longer lists are the vault list's to settle; the ones it lists are checked here.
    if (!(err instanceof VaultListChanged)) throw err;
    listed = err.listed;
  }
  const vaults: CheckedVault[] = [];
  const skipped: Checked["skipped"] = [];
  const items: Item[] = [];
  for (const v of listed) {
    if (v.problem) {
      skipped.push({ vaultId: v.vaultId, name: v.nameCheck.name, why: sentence(v.problem) });
      continue;
    }
    try {
      items.push(...(await client.items.list(v.vaultId)));
      vaults.push(v);
    } catch (err) {
      skipped.push({ vaultId: v.vaultId, name: v.nameCheck.name, why: sentence(err) });
    }
  }
  const scores = await strengths(items);
  const oldAfterDays = oldPasswordDays();
  const report = passwordHealth(items, { oldAfterDays, strength: (password) => scores.get(password)! });
  return { report, vaults, skipped, oldAfterDays };
}

/** zxcvbn's score of each distinct login password (sdk/password-strength.ts, which loads its dictionaries on first use). */
async function strengths(items: readonly Item[]): Promise<Map<string, number>> {
  const scores = new Map<string, number>();
  for (const i of items) {
    const password = i.type === "login" ? i.fields.password : undefined;
    if (password && !scores.has(password)) scores.set(password, (await checkMasterPassword(password)).score);
  }
  return scores;
}
