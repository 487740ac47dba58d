/** For organization owners and admins: invites (the link shown once) and the audit log. */
import { useEffect, useState } from "preact/hooks";
import { GRANTABLE_ROLES, type AuditRecord, type CheckedAuditLog, type GrantableRole, type Invite } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, Choice, ErrorNote, Field, inputValue, useAction, Submit } from "../ui";

/** How long an invite link stays valid: the server's `expiresIn`, in words. */
const EXPIRY_CHOICES = [
  ["24h", "1 day"],
  ["72h", "3 days"],
  ["7d", "7 days"],
] as const;

export function Invites() {
  const client = currentClient();
  const [invites, setInvites] = useState<Invite[] | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<GrantableRole>("member");
  const [expiresIn, setExpiresIn] = useState("72h");
  const [link, setLink] = useState<{ email: string; url: string; orgName: string; role: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const load = useAction();
  const act = useAction();
  const reload = () => load.run(async () => setInvites(await client.listInvites()));
  useEffect(() => void reload(), []);

  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      // The link carries the token, a binding secret and this account's key fingerprint in its
      // fragment: browsers never send it to a server, so no log holds it and the server never sees the secret.
      const invite = await client.createInvite(email, role, expiresIn);
      setLink({ email, url: `${location.origin}/#/invite/${invite.code}`, orgName: invite.orgName, role });
      setCopied(false);
      setEmail("");
      await reload();
    });
  };
  return (
    <main>
      <h1>Invites</h1>
      <form onSubmit={create} class="card" aria-label="Invite someone">
        <h2>Invite someone</h2>
        <Field id="invite-email" label="Their email">
          <input id="invite-email" type="email" required value={email} onInput={(e) => setEmail(inputValue(e))} />
        </Field>
        <Choice id="invite-role" label="Organization role" value={role} options={GRANTABLE_ROLES} onChange={setRole} />
        <Choice id="invite-expiry" label="Valid for" value={expiresIn} options={EXPIRY_CHOICES} onChange={setExpiresIn} />
        <Submit busy={act.busy}>Create invite</Submit>
      </form>
      <ErrorNote error={act.error} />
      {link && (
        <div class="note" role="status">
          <p>
            Send this link to {link.email}, invited to <strong>{link.orgName}</strong> as {link.role} (you signed the invite as such). It is
            shown only now and works once:
          </p>
          <p>
            <code data-testid="invite-link">{link.url}</code>
          </p>
          <button
            type="button"
            class="secondary"
            onClick={() =>
              void navigator.clipboard.writeText(link.url).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            Copy link
          </button>
          {copied && <span> Copied.</span>}
        </div>
      )}
      <h2>Pending invites</h2>
      {load.busy && !invites && <Busy label="Loading invites…" />}
      <ErrorNote error={load.error} />
      {invites && invites.length === 0 && <p>No pending invites.</p>}
      {invites && invites.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {invites.map((i) => (
              <tr key={i.id}>
                <td>{i.email}</td>
                <td>{i.role}</td>
                <td>{new Date(i.expiresAt).toLocaleString()}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    onClick={() =>
                      void act.run(async () => {
                        await client.revokeInvite(i.id);
                        await reload();
                      })
                    }
                  >
                    Revoke invite for {i.email}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

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
        const [verified, people] = await Promise.all([client.verifyAuditLog(undefined, { full: true }), client.orgMembers()]);
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
      {check && (
        <p class="note" role="status" data-testid="audit-verdict">
          Checked here, in your browser: all {check.count} records, each hash recomputed and linked to the one before, none missing or
          reordered
          {check.seenBefore && <> (record {check.seenBefore.seq}, which this browser saw before, is unchanged)</>}. The head (record{" "}
          {check.seq}, <code>{check.head.slice(0, 16)}…</code>) is signed by the server's audit key{" "}
          <code>{check.auditKeyFingerprint.slice(0, 16)}…</code>, pinned in this browser. What each record says happened is the server's
          word: membership and key changes are also in each vault's signed roster.
          <br />
          Fingerprint <code data-testid="audit-fingerprint">{check.fingerprint}</code>: another owner or admin who reads you the same one
          sees the same log.
        </p>
      )}
      {events && (
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
      )}
    </main>
  );
}
