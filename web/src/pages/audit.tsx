/** For organization owners and admins: the audit log, every record checked here in the browser before it is shown. */
import { useEffect, useState } from "preact/hooks";
import type { AuditRecord, CheckedAuditLog } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, ErrorNote, useAction } from "../components/ui";

/** Who stands behind a record's content: the server alone, or also what members signed (a signed vault's roster or item log). */
function vouchedBy(type: string): string {
  if (/^vault\.(created|renamed|member\.added|member\.removed|member\.role_changed|rekeyed)$/.test(type))
    return "the server; for a signed vault, also its roster";
  if (type.startsWith("item.")) return "the server; for a signed vault, also its item log";
  return "the server only";
}

export function Audit() {
  const client = currentClient();
  const [events, setEvents] = useState<AuditRecord[] | null>(null);
  const [check, setCheck] = useState<CheckedAuditLog | null>(null);
  const [names, setNames] = useState(new Map<string, string>());
  const load = useAction();
  useEffect(
    () =>
      void load.run(async () => {
        // Checked here, every record, before anything is shown: the records shown are exactly the ones checked.
        const [verified, people] = await Promise.all([client.audit.verify(undefined, { full: true }), client.people.list()]);
        setEvents(verified.records.slice(0, 200));
        setCheck(verified);
        setNames(new Map(people.map((p) => [p.userId, p.email])));
      }),
    [],
  );
  const who = (id?: string) => (id ? (names.get(id) ?? id) : "");
  return (
    <main>
      <h1>Audit log</h1>
      {load.busy && <Busy label="Loading and verifying the audit log…" />}
      <ErrorNote error={load.error} />
      {check && <Verdict check={check} />}
      {events && <AuditTable events={events} who={who} />}
    </main>
  );
}

/** What this browser checked of the log, and the fingerprint another owner or admin compares. */
function Verdict({ check }: { check: CheckedAuditLog }) {
  return (
    <p class="note" role="status" data-testid="audit-verdict">
      Checked here, in your browser: all {check.count} records, each hash recomputed and linked to the one before, none missing or reordered
      {check.seenBefore && <> (record {check.seenBefore.seq}, which this browser saw before, is unchanged)</>}. The head (record {check.seq}
      , <code>{check.head.slice(0, 16)}…</code>) is signed by the server's audit key <code>{check.auditKeyFingerprint.slice(0, 16)}…</code>,
      pinned in this browser. What each record says happened is the server's word: membership and key changes are also in each vault's
      signed roster.
      <br />
      Fingerprint <code data-testid="audit-fingerprint">{check.fingerprint}</code>: another owner or admin who reads you the same one sees
      the same log.
    </p>
  );
}

function AuditTable({ events, who }: { events: AuditRecord[]; who(id?: string): string }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">When</th>
          <th scope="col">What</th>
          <th scope="col">Who</th>
          <th scope="col">About</th>
          <th scope="col">Vouched for by</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.seq}>
            <td>{e.seq}</td>
            <td>{new Date(e.at).toLocaleString()}</td>
            <td>{e.type}</td>
            <td>{who(e.actorId)}</td>
            <td>
              {[
                e.targetUserId && who(e.targetUserId),
                e.vaultId && `vault ${e.vaultId.slice(0, 8)}`,
                e.inviteId && `invite ${e.inviteId.slice(0, 8)}`,
              ]
                .filter(Boolean)
                .join(", ")}
            </td>
            <td>{vouchedBy(e.type)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
