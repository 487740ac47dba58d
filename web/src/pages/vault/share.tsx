/**
 * Sharing a vault: the person chosen, their key fingerprint and what vouches for it in this browser (an
 * invite this browser sent them, a check made with them, or the first sight of it). A person whose
 * keys or identity fail the SDK's checks (a changed key, an email paired with another user, an
 * invite binding that does not hold) is refused, with the fingerprints to compare and a way to
 * trust the key once it has been checked with them.
 */
import { useState } from "preact/hooks";
import { GRANTABLE_ROLES, type GrantableRole, type TrustLevel } from "../../../../sdk";
import { currentClient } from "../../session";
import { Choice, ErrorNote, Field, inputValue, useAction, type Action } from "../../components/ui";
import type { OrgMember } from "./members";

/** A person's key as this browser sees it: now, as pinned here, and what vouches for it. */
interface Key {
  current: string;
  pinned?: string;
  email: string;
  trust?: TrustLevel;
}

/** What vouches for a person's keys in this browser, in words. */
function trustWords(email: string, trust: TrustLevel | undefined): string {
  if (trust === "invite") return `Vouched for by the invite link you sent ${email}: nothing to compare.`;
  if (trust === "checked") return `You compared it with ${email} and trusted it.`;
  if (trust === "first-use")
    return `Pinned when this browser first saw it. Compare it with the fingerprint ${email} sees on their "Your key" page, by phone or in person.`;
  return `First time you see this key: it will be pinned. Compare it with the fingerprint ${email} sees on their "Your key" page, by phone or in person.`;
}

export function ShareForm(props: { vaultId: string; candidates: OrgMember[]; onShared(email: string): void; onTrusted(): void }) {
  const { vaultId, candidates } = props;
  const client = currentClient();
  const [userId, setUserId] = useState("");
  const [role, setRole] = useState<GrantableRole>("member");
  const [key, setKey] = useState<Key | null>(null);
  const action = useAction();
  const choose = (id: string) => {
    setUserId(id);
    setKey(null);
    if (id) void action.run(async () => setKey(await client.keys.fingerprint(id)));
  };
  const chosen = candidates.find((c) => c.userId === userId);
  const refused = chosen?.problem !== undefined || (key?.pinned !== undefined && key.pinned !== key.current);
  const share = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await client.members.share(vaultId, userId, role);
      setUserId("");
      setKey(null);
      props.onShared(chosen?.email ?? "");
    });
  };
  const trusted = async (current: Key) => {
    await client.keys.trust(userId, current.current, current.email);
    setKey(await client.keys.fingerprint(userId));
    props.onTrusted();
  };
  return (
    <form onSubmit={share} class="card" aria-label="Share this vault">
      <h3>Share with someone in your organization</h3>
      {candidates.length === 0 ? (
        <p>Everyone in your organization is a member already.</p>
      ) : (
        <>
          <PersonChoice candidates={candidates} userId={userId} onChange={choose} />
          <Choice id="share-role" label="Role" value={role} options={GRANTABLE_ROLES} onChange={setRole} />
          {key && !refused && chosen && <KeyVouched person={chosen} fingerprint={key} />}
          {key && refused && <KeyRefused userId={userId} person={chosen} fingerprint={key} action={action} onTrust={() => trusted(key)} />}
          <button type="submit" disabled={!userId || !key || refused || action.busy}>
            Share
          </button>
        </>
      )}
      <ErrorNote error={action.error} />
    </form>
  );
}

function PersonChoice(props: { candidates: OrgMember[]; userId: string; onChange(userId: string): void }) {
  return (
    <Field id="share-user" label="Person">
      <select id="share-user" value={props.userId} onChange={(e) => props.onChange(inputValue(e))}>
        <option value="">Choose…</option>
        {props.candidates.map((c) => (
          <option key={c.userId} value={c.userId}>
            {c.problem ? `user ${c.userId} (shown as ${c.email}: keys or identity do not check out)` : c.email}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** The chosen person's key, and what vouches for it here. */
function KeyVouched({ person, fingerprint: key }: { person: OrgMember; fingerprint: Key }) {
  const who = person.email;
  return (
    <p class="note" data-testid="fingerprint">
      Key fingerprint of <strong>{who}</strong> (user <code>{person.userId}</code>): <code>{key.current}</code>
      <br />
      {key.pinned ? `It matches the key pinned for ${who} in this browser. ${trustWords(who, key.trust)}` : trustWords(who, undefined)}
      {!person.stated && (
        <>
          <br />
          {`${who} has not signed their email and keys yet (an account not used since this check came): the email is the server's word.`}
        </>
      )}
    </p>
  );
}

/** The server shows keys this browser cannot vouch for: both fingerprints, and trusting the new one once checked with the person. */
function KeyRefused(props: { userId: string; person?: OrgMember; fingerprint: Key; action: Action; onTrust(): Promise<void> }) {
  const { fingerprint: key, person } = props;
  return (
    <div class="danger-zone" role="alert" data-testid="identity-problem">
      <p>
        <strong>Warning: the keys the server shows for user {props.userId} are not the ones this browser can vouch for.</strong> The server
        may be trying to make you share with someone else.
      </p>
      {person?.problem && <p>{person.problem.message}</p>}
      <p>
        {key.pinned !== undefined && (
          <>
            Pinned: <code>{key.pinned}</code>
            <br />
          </>
        )}
        Now: <code>{key.current}</code>
      </p>
      <p>
        Ask <strong>{key.email}</strong> for the fingerprint on their "Your key" page, over another channel. Only if it is this one, and
        they are {key.email}:
      </p>
      <button type="button" class="danger" onClick={() => void props.action.run(props.onTrust)}>
        I checked it: trust this key for {key.email}
      </button>
    </div>
  );
}
