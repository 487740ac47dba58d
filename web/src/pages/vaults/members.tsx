/** A vault's members: a row each (role, removal, by the role table), and the form that shares the vault. */
import { useState } from "preact/hooks";
import {
  GRANTABLE_ROLES,
  type GrantableRole,
  mayDo,
  mayRemoveMember,
  VAULT_ROLES,
  type VaultRole,
  type CheckedMember,
  type MemberEntry,
  type TrustLevel,
} from "../../../../sdk";
import { currentClient } from "../../session";
import { Choice, ErrorNote, Field, inputValue, useAction } from "../../ui";

export type OrgMember = Pick<CheckedMember, "userId" | "email" | "problem" | "stated" | "removedAt">;

/** What vouches for a person's keys in this browser, in words. */
function trustWords(email: string, trust: TrustLevel | undefined): string {
  if (trust === "invite") return `Vouched for by the invite link you sent ${email}: nothing to compare.`;
  if (trust === "checked") return `You compared it with ${email} and trusted it.`;
  if (trust === "first-use")
    return `Pinned when this browser first saw it. Compare it with the fingerprint ${email} sees on their "Your key" page, by phone or in person.`;
  return `First time you see this key: it will be pinned. Compare it with the fingerprint ${email} sees on their "Your key" page, by phone or in person.`;
}

export function MemberRow(props: {
  member: MemberEntry;
  email(id: string): string;
  myRole: VaultRole;
  me: string;
  busy: boolean;
  onRole(role: VaultRole): void;
  onRemove(): void;
}) {
  const { member: m, email } = props;
  const [role, setRole] = useState(m.role);
  const self = m.userId === props.me;
  const mayRemove = mayRemoveMember(props.myRole, m.role, self);
  return (
    <tr>
      <td>
        {email(m.userId)}
        {self ? " (you)" : ""}
      </td>
      <td>
        {mayDo(props.myRole, "changeRole") ? (
          <>
            <label class="visually-hidden" for={`role-${m.userId}`}>
              Role of {email(m.userId)}
            </label>
            <select id={`role-${m.userId}`} value={role} onChange={(e) => setRole(inputValue(e) as typeof role)}>
              {VAULT_ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>{" "}
            {role !== m.role && (
              <button type="button" class="secondary" disabled={props.busy} onClick={() => props.onRole(role)}>
                Save role
              </button>
            )}
          </>
        ) : (
          m.role
        )}
      </td>
      <td>{email(m.senderId)}</td>
      <td>
        {mayRemove && (
          <button type="button" class="danger" disabled={props.busy} onClick={props.onRemove}>
            {self ? "Leave" : `Remove ${email(m.userId)}`}
          </button>
        )}
      </td>
    </tr>
  );
}

/**
 * Sharing: the person chosen, their key fingerprint and what vouches for it in this browser (an
 * invite this browser sent them, a check made with them, or the first sight of it). A person whose
 * keys or identity fail the SDK's checks (a changed key, an email paired with another user, an
 * invite binding that does not hold) is refused, with the fingerprints to compare and a way to
 * trust the key once it has been checked with them.
 */
export function ShareForm(props: { vaultId: string; candidates: OrgMember[]; onShared(email: string): void; onTrusted(): void }) {
  const { vaultId, candidates } = props;
  const client = currentClient();
  const [userId, setUserId] = useState("");
  const [role, setRole] = useState<GrantableRole>("member");
  const [key, setKey] = useState<{ current: string; pinned?: string; email: string; trust?: TrustLevel } | null>(null);
  const action = useAction();
  const choose = (id: string) => {
    setUserId(id);
    setKey(null);
    if (id) void action.run(async () => setKey(await client.fingerprint(id)));
  };
  const chosen = candidates.find((c) => c.userId === userId);
  const refused = chosen?.problem !== undefined || (key?.pinned !== undefined && key.pinned !== key.current);
  const who = chosen?.email ?? "";
  const share = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await client.share(vaultId, userId, role);
      setUserId("");
      setKey(null);
      props.onShared(who);
    });
  };
  return (
    <form onSubmit={share} class="card" aria-label="Share this vault">
      <h3>Share with someone in your organization</h3>
      {candidates.length === 0 ? (
        <p>Everyone in your organization is a member already.</p>
      ) : (
        <>
          <Field id="share-user" label="Person">
            <select id="share-user" value={userId} onChange={(e) => choose(inputValue(e))}>
              <option value="">Choose…</option>
              {candidates.map((c) => (
                <option key={c.userId} value={c.userId}>
                  {c.problem ? `user ${c.userId} (shown as ${c.email}: keys or identity do not check out)` : c.email}
                </option>
              ))}
            </select>
          </Field>
          <Choice id="share-role" label="Role" value={role} options={GRANTABLE_ROLES} onChange={setRole} />
          {key && !refused && chosen && (
            <p class="note" data-testid="fingerprint">
              Key fingerprint of <strong>{who}</strong> (user <code>{userId}</code>): <code>{key.current}</code>
              <br />
              {key.pinned
                ? `It matches the key pinned for ${who} in this browser. ${trustWords(who, key.trust)}`
                : trustWords(who, undefined)}
              {!chosen.stated && (
                <>
                  <br />
                  {`${who} has not signed their email and keys yet (an account not used since this check came): the email is the server's word.`}
                </>
              )}
            </p>
          )}
          {key && refused && (
            <div class="danger-zone" role="alert" data-testid="identity-problem">
              <p>
                <strong>Warning: the keys the server shows for user {userId} are not the ones this browser can vouch for.</strong> The
                server may be trying to make you share with someone else.
              </p>
              {chosen?.problem && <p>{chosen.problem.message}</p>}
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
                Ask <strong>{key.email}</strong> for the fingerprint on their "Your key" page, over another channel. Only if it is this one,
                and they are {key.email}:
              </p>
              <button
                type="button"
                class="danger"
                onClick={() =>
                  void action.run(async () => {
                    await client.trustUser(userId, key.current, key.email);
                    setKey(await client.fingerprint(userId));
                    props.onTrusted();
                  })
                }
              >
                I checked it: trust this key for {key.email}
              </button>
            </div>
          )}
          <button type="submit" disabled={!userId || !key || refused || action.busy}>
            Share
          </button>
        </>
      )}
      <ErrorNote error={action.error} />
    </form>
  );
}
