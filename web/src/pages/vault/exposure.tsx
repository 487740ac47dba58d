/** After a removal: the secrets the person could read, as a checklist that clears as each is changed (sdk/exposure.ts). */
import { useEffect, useState } from "preact/hooks";
import type { ExposureReport } from "../../../../sdk";
import { currentClient } from "../../session";
import { Busy, ErrorNote, useAction } from "../../components/ui";

export function Exposure({ vaultId, userId, who, version }: { vaultId: string; userId: string; who: string; version: unknown }) {
  const client = currentClient();
  const [report, setReport] = useState<ExposureReport | null>(null);
  const load = useAction();
  useEffect(() => void load.run(async () => setReport(await client.people.exposure(vaultId, userId))), [vaultId, userId, version]);
  const open = report?.items.filter((i) => i.status === "exposed") ?? [];
  const last = report?.memberships.at(-1);
  return (
    <section aria-labelledby="exposure-heading" class="card">
      <h2 id="exposure-heading">What {who} could read</h2>
      {load.busy && <Busy label="Checking what they could read…" />}
      <ErrorNote error={load.error} />
      {report && !last && <p>{who} was never a member of this vault, by its signed member history.</p>}
      {report && last && (
        <>
          <p>
            A member from {new Date(last.from.at).toLocaleString()}
            {last.until ? ` to ${new Date(last.until.at).toLocaleString()}` : " until now"}, holding key versions {report.keyVersions!.from}{" "}
            to {report.keyVersions!.to}.{" "}
            {report.lastActivity
              ? `Their last recorded change here: ${new Date(report.lastActivity).toLocaleString()}.`
              : "No change of theirs is recorded."}{" "}
            Reads are not recorded: assume they read everything they could.
          </p>
          <p role="status">
            {open.length === 0
              ? "Every secret they could read has been changed since."
              : `${open.length} secret${open.length === 1 ? "" : "s"} to change:`}
          </p>
          <ul class="checklist" aria-label={`Secrets ${who} could read`}>
            {report.items.map((i) => (
              <li key={i.itemId}>
                <input type="checkbox" id={`exposed-${i.itemId}`} checked={i.status === "changed"} disabled />{" "}
                <label for={`exposed-${i.itemId}`}>
                  {i.name}
                  {i.status === "changed" ? " (changed since)" : ""}
                </label>
                <span class="meta">
                  {" "}
                  · {i.revisions + 1} version{i.revisions ? "s" : ""} they could read
                  {i.basis === "signed log" ? "" : " · unchanged since the history this browser verified starts"}
                </span>
              </li>
            ))}
          </ul>
          {report.trash.length > 0 && (
            <p>In the trash, readable by them before: {report.trash.map((t) => t.name).join(", ")}. Purge them.</p>
          )}
        </>
      )}
    </section>
  );
}
