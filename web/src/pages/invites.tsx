/** For organization owners and admins: inviting someone (the link shown once) and the pending invites. */
import { useEffect, useState } from "preact/hooks";
import { GRANTABLE_ROLES, type GrantableRole, type Invite } from "../../../sdk";
import { currentClient } from "../session";
import { Busy, Choice, ErrorNote, Field, inputValue, useAction, Submit, type Action } from "../components/ui";

/** How long an invite link stays valid: the server's `expiresIn`, in words. */
const EXPIRY_CHOICES = [
  ["24h", "1 day"],
  ["72h", "3 days"],
  ["7d", "7 days"],
] as const;

/** An invite just made: its link, shown once. */
interface Link {
  email: string;
  url: string;
  orgName: string;
  role: string;
  expiresAt: string;
}

/** The invitation's words, with the link, as the inviter's mail app or share sheet sends them. */
function inviteMessage(link: Link): { subject: string; body: string } {
  return {
    subject: `Your invitation to ${link.orgName}`,
    body: [
      `You are invited to ${link.orgName} as ${link.role}.`,
      "",
      `Open this link to accept it and choose your master password. It works once, until ${new Date(link.expiresAt).toLocaleString()}:`,
      link.url,
      "",
      "Keep it to yourself: whoever opens it first can accept it in your name.",
    ].join("\n"),
  };
}

/**
 * A mailto: link to the invitee, made here: the mail goes from the inviter's own mail app, so the
 * link's secret never passes through this server.
 */
function mailtoHref(link: Link): string {
  const at = link.email.lastIndexOf("@");
  const to = `${encodeURIComponent(link.email.slice(0, at))}@${encodeURIComponent(link.email.slice(at + 1))}`;
  const { subject, body } = inviteMessage(link);
  // RFC 6068 writes a line break of the body as CRLF.
  return `mailto:${to}?subject=${encodeURIComponent(subject)}&body=${encodeURIComponent(body.replace(/\n/g, "\r\n"))}`;
}

export function Invites() {
  const client = currentClient();
  const [invites, setInvites] = useState<Invite[] | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<GrantableRole>("member");
  const [expiresIn, setExpiresIn] = useState("72h");
  const [link, setLink] = useState<Link | null>(null);
  const load = useAction();
  const act = useAction();
  const reload = () => load.run(async () => setInvites(await client.invites.list()));
  useEffect(() => void reload(), []);

  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      // The link carries the token, a binding secret and this account's key fingerprint in its
      // fragment: browsers never send it to a server, so no log holds it and the server never sees the secret.
      const invite = await client.invites.create(email, role, expiresIn);
      const url = `${location.origin}/#/invite/${invite.code}`;
      setLink({ email, url, orgName: invite.orgName, role, expiresAt: invite.expiresAt });
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
      {link && <InviteLink key={link.url} link={link} />}
      <h2>Pending invites</h2>
      {load.busy && !invites && <Busy label="Loading invites…" />}
      <ErrorNote error={load.error} />
      {invites && invites.length === 0 && <p>No pending invites.</p>}
      {invites && invites.length > 0 && <PendingInvites invites={invites} act={act} onRevoked={reload} />}
    </main>
  );
}

/**
 * The link of the invite just made, shown once, with ways to pass it on that stay in this browser:
 * copying it, the mail app (mailto:), and the system's share sheet where the browser has one.
 */
function InviteLink({ link }: { link: Link }) {
  const [copied, setCopied] = useState(false);
  const share = () => void navigator.share({ title: inviteMessage(link).subject, text: inviteMessage(link).body }).catch(() => undefined);
  return (
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
      </button>{" "}
      <a href={mailtoHref(link)}>Send by email</a>{" "}
      {"share" in navigator && (
        <button type="button" class="secondary" onClick={share}>
          Share…
        </button>
      )}
      {copied && <span> Copied.</span>}
      <p>The mail or message goes from your own app: this server never sees the link.</p>
    </div>
  );
}

function PendingInvites({ invites, act, onRevoked }: { invites: Invite[]; act: Action; onRevoked(): Promise<void> }) {
  const client = currentClient();
  return (
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
                    await client.invites.revoke(i.id);
                    await onRevoked();
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
  );
}
