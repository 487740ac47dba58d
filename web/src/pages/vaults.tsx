/** The vault list, and one vault: its items, members, sharing, rekey and signed member history. */
import { useEffect, useState } from "preact/hooks";
import {
  describeLink,
  generatePassword,
  mayDo,
  mayRemoveMember,
  VAULT_ROLES,
  type VaultRole,
  type CheckedMember,
  type CheckedVault,
  type Item,
  type MemberEntry,
  type NameCheck,
  type RekeyProgress,
  type TrustLevel,
  type Vault,
  type VerifiedRoster,
} from "../../../sdk";
import { clipboardClearMs, currentClient, go } from "../session";
import { Busy, ErrorNote, Field, inputValue, useAction } from "../ui";

export function Vaults() {
  const client = currentClient();
  const [vaults, setVaults] = useState<CheckedVault[] | null>(null);
  const [query, setQuery] = useState("");
  const [name, setName] = useState("");
  const [type, setType] = useState<"shared" | "personal">("shared");
  const load = useAction();
  const create = useAction();
  useEffect(() => void load.run(async () => setVaults(await client.listCheckedVaults())), []);

  const wanted = query.trim().toLowerCase();
  const shown = (vaults ?? []).filter((v) => v.nameCheck.name.toLowerCase().includes(wanted));
  const submit = (e: Event) => {
    e.preventDefault();
    void create.run(async () => {
      const vault = await client.createVault(name, type);
      go(`#/vault/${vault.vaultId}`);
    });
  };

  return (
    <main>
      <h1>Your vaults</h1>
      <Field id="vault-search" label="Search vaults">
        <input id="vault-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
      </Field>
      {load.busy && <Busy label="Loading your vaults…" />}
      <ErrorNote error={load.error} />
      {vaults && shown.length === 0 && <p>{vaults.length === 0 ? "No vaults yet: create one below." : "No vault matches your search."}</p>}
      <ul class="list" aria-label="Vaults">
        {shown.map((v) => (
          <li key={v.vaultId}>
            <a href={`#/vault/${v.vaultId}`}>{v.nameCheck.name}</a> <NameFlag check={v.nameCheck} />
            <span class="meta">
              {v.vaultType} · {v.role}
              {v.rekeyRequired ? " · rekey required" : ""}
            </span>
          </li>
        ))}
      </ul>
      <h2>New vault</h2>
      <form onSubmit={submit} class="inline">
        <Field id="new-vault-name" label="Name">
          <input id="new-vault-name" required maxLength={256} value={name} onInput={(e) => setName(inputValue(e))} />
        </Field>
        <Field id="new-vault-type" label="Kind">
          <select id="new-vault-type" value={type} onChange={(e) => setType(inputValue(e) as "shared" | "personal")}>
            <option value="shared">Shared (can add members)</option>
            <option value="personal">Personal (only you)</option>
          </select>
        </Field>
        <button type="submit" disabled={create.busy}>
          Create vault
        </button>
      </form>
      <ErrorNote error={create.error} />
    </main>
  );
}

/** Beside a vault's name: nothing when its signed roster vouches for it, else why not. */
function NameFlag({ check }: { check: NameCheck }) {
  if (check.status === "verified") return null;
  if (check.status === "unverified")
    return (
      <span class="flag" title={check.why} data-testid="name-unverified">
        (name not verified)
      </span>
    );
  return (
    <span class="flag danger-text" role="alert" data-testid="name-mismatch">
      (the server calls it "{check.shown}": not what its signed history says)
    </span>
  );
}

/** What vouches for a person's keys in this browser, in words. */
function trustWords(email: string, trust: TrustLevel | undefined): string {
  if (trust === "invite") return `Vouched for by the invite link you sent ${email}: nothing to compare.`;
  if (trust === "checked") return `You compared it with ${email} and trusted it.`;
  if (trust === "first-use")
    return `Pinned when this browser first saw it. Compare it with the fingerprint ${email} sees on their "Your key" page, by phone or in person.`;
  return `First time you see this key: it will be pinned. Compare it with the fingerprint ${email} sees on their "Your key" page, by phone or in person.`;
}

type OrgMember = Pick<CheckedMember, "userId" | "email" | "problem" | "stated">;

const PHASES: Record<RekeyProgress["phase"], string> = {
  items: "Re-encrypting items",
  wraps: "Wrapping the new key for members",
  upload: "Uploading",
};

export function VaultPage({ vaultId }: { vaultId: string }) {
  const client = currentClient();
  const me = client.account.userId;
  const [vault, setVault] = useState<CheckedVault | null>(null);
  const [items, setItems] = useState<Item[]>([]);
  const [members, setMembers] = useState<MemberEntry[]>([]);
  const [org, setOrg] = useState<OrgMember[]>([]);
  const [roster, setRoster] = useState<VerifiedRoster | null>(null);
  const [fingerprint, setFingerprint] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [editing, setEditing] = useState<Item | "new" | null>(null);
  const [progress, setProgress] = useState<RekeyProgress | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = useAction();
  const act = useAction();

  const reload = () =>
    load.run(async () => {
      const v = await client.getCheckedVault(vaultId);
      const [its, { members: mem, roster: chain }, people] = await Promise.all([
        client.listItems(vaultId),
        client.verifiedMembers(vaultId),
        client.orgMembers(),
      ]);
      setVault(v);
      setItems(its);
      setMembers(mem);
      setOrg(people.map((p) => ({ userId: p.userId, email: p.email, problem: p.problem, stated: p.stated })));
      setRoster(chain);
      setFingerprint(chain ? await client.vaultFingerprint(vaultId) : null);
    });
  useEffect(() => void reload(), [vaultId]);

  // An email is shown for a user only where their keys and identity check out (else their id).
  const email = (userId: string) => org.find((p) => p.userId === userId && !p.problem)?.email ?? userId;
  // What the page offers is what the role table allows (the SDK's, which the server enforces).
  const may = (action: Parameters<typeof mayDo>[1]) => vault !== undefined && vault !== null && mayDo(vault.role, action);
  // The page reads the vault again after a change, also one that failed half way (a removal whose rekey did not go through).
  const change = (task: () => Promise<void>) =>
    act.run(async () => {
      setNotice(null);
      try {
        await task();
      } finally {
        await reload();
      }
    });

  const rekeyNow = async () => {
    setProgress({ phase: "items", done: 0, total: 0 });
    try {
      const result = await client.rekey(vaultId, { onProgress: setProgress });
      setNotice(
        `Rekeyed: key version ${result.keyVersion}, ${result.items} items re-encrypted, wrapped for ${result.members} members${result.attempts > 1 ? ` (after ${result.attempts - 1} retries: the vault changed meanwhile)` : ""}.`,
      );
    } finally {
      setProgress(null);
    }
  };
  const rekey = () => change(rekeyNow);

  if (!vault) {
    return (
      <main>
        <h1>Vault</h1>
        {load.busy && <Busy label="Opening the vault…" />}
        <ErrorNote error={load.error} />
        <p>
          <a href="#/vaults">Back to your vaults</a>
        </p>
      </main>
    );
  }

  const item = items.find((i) => i.itemId === open);
  return (
    <main>
      <p>
        <a href="#/vaults">← All vaults</a>
      </p>
      <h1>
        {vault.nameCheck.name} <NameFlag check={vault.nameCheck} />
      </h1>
      <p class="meta">
        {vault.vaultType} vault · your role: {vault.role} · key version {vault.keyVersion}
        {roster ? " · signed member and item history verified" : ""}
      </p>
      {fingerprint && (
        <p class="meta" data-testid="vault-fingerprint">
          Fingerprint <code>{fingerprint}</code>: another member who reads you the same one sees the same history of this vault.
        </p>
      )}
      {!roster && (
        <Adopt
          vault={vault}
          members={members}
          email={email}
          me={me}
          onAdopted={() => {
            setNotice("The vault has a signed member history now, and a new key for the members you kept.");
            void reload();
          }}
        />
      )}
      <ErrorNote error={load.error} />
      <ErrorNote error={act.error} />
      {notice && (
        <p class="note" role="status">
          {notice}
        </p>
      )}
      {vault.rekeyRequired && (
        <div class="warning" role="alert">
          <p>A member was removed and still holds the old key. Rekey the vault so that they cannot read anything in it.</p>
          {may("rekey") && (
            <button type="button" onClick={() => void rekey()} disabled={act.busy}>
              {act.error ? "Try the rekey again" : "Rekey now"}
            </button>
          )}
        </div>
      )}
      {progress && (
        <div class="progress" role="status">
          <label for="rekey-progress">
            {PHASES[progress.phase]}: {progress.done} of {progress.total}
          </label>
          <progress id="rekey-progress" max={Math.max(progress.total, 1)} value={progress.done} />
        </div>
      )}

      <section aria-labelledby="items-heading">
        <h2 id="items-heading">Items</h2>
        {items.length === 0 && <p>No items yet.</p>}
        <ul class="list" aria-label="Items">
          {items.map((i) => (
            <li key={i.itemId}>
              <button
                type="button"
                class="link"
                aria-expanded={open === i.itemId}
                onClick={() => {
                  setOpen(open === i.itemId ? null : i.itemId);
                  setEditing(null);
                }}
              >
                {i.name}
              </button>
              {i.fields.username && <span class="meta">{i.fields.username}</span>}
            </li>
          ))}
        </ul>
        {item && editing === null && (
          <ItemView
            item={item}
            onEdit={() => setEditing(item)}
            onDelete={() => {
              if (confirm(`Delete "${item.name}"? This cannot be undone.`))
                void change(async () => {
                  await client.deleteItem(vaultId, item.itemId);
                  setOpen(null);
                });
            }}
          />
        )}
        {editing !== null ? (
          <ItemForm
            item={editing === "new" ? undefined : editing}
            busy={act.busy}
            onCancel={() => setEditing(null)}
            onSave={(content) =>
              change(async () => {
                const saved =
                  editing === "new"
                    ? await client.addItem(vaultId, content)
                    : await client.editItem(vaultId, editing.itemId, content, { revision: editing.revision });
                setEditing(null);
                setOpen(saved.itemId);
              })
            }
          />
        ) : (
          <button
            type="button"
            onClick={() => {
              setEditing("new");
              setOpen(null);
            }}
          >
            Add item
          </button>
        )}
      </section>

      {vault.vaultType === "shared" && (
        <section aria-labelledby="members-heading">
          <h2 id="members-heading">Members</h2>
          <table>
            <caption class="visually-hidden">Members of this vault</caption>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">Key wrapped by</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {members.map((m) => (
                <MemberRow
                  key={m.userId}
                  member={m}
                  email={email}
                  myRole={vault.role}
                  me={me}
                  busy={act.busy}
                  onRole={(role) =>
                    change(async () => {
                      await client.changeRole(vaultId, m.userId, role);
                      setNotice(`${email(m.userId)} is ${role} now.`);
                    })
                  }
                  onRemove={() => {
                    const self = m.userId === me;
                    if (!confirm(self ? `Leave "${vault.vaultName}"?` : `Remove ${email(m.userId)} from "${vault.vaultName}"?`)) return;
                    void change(async () => {
                      const result = await client.removeMember(vaultId, m.userId);
                      if (self) return go("#/vaults");
                      setNotice(
                        `${email(m.userId)} was removed.${result.rekeyRequired ? " Rekeying the vault: they still hold the old key." : ""}`,
                      );
                      // The remover rekeys at once: until then nothing is written under the key they still hold.
                      if (result.rekeyRequired) await rekeyNow();
                    });
                  }}
                />
              ))}
            </tbody>
          </table>
          {may("addMember") && (
            <ShareForm
              vaultId={vaultId}
              candidates={org.filter((p) => !members.some((m) => m.userId === p.userId))}
              onShared={(who) => {
                setNotice(`Shared with ${who}.`);
                void reload();
              }}
              onTrusted={() => void reload()}
            />
          )}
          {may("rekey") && !vault.rekeyRequired && (
            <p>
              <button type="button" class="secondary" onClick={() => void rekey()} disabled={act.busy}>
                Rekey (new vault key)
              </button>
            </p>
          )}
        </section>
      )}

      <section aria-labelledby="history-heading">
        <h2 id="history-heading">Member history</h2>
        {roster ? (
          <ol class="history">
            {roster.links.map((l) => (
              <li key={l.seq}>
                <time dateTime={l.at}>{new Date(l.at).toLocaleString()}</time> {email(l.actorId)} {describeLink(l, email)}
              </li>
            ))}
          </ol>
        ) : (
          <p>This vault has no signed member history: its member list is the server's word.</p>
        )}
      </section>

      {may("rename") && <VaultSettings vault={vault} onRenamed={() => void reload()} />}
    </main>
  );
}

function ItemView({ item, onEdit, onDelete }: { item: Item; onEdit(): void; onDelete(): void }) {
  const [revealed, setRevealed] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);
  const password = item.fields.password;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(password!);
    } catch {
      return setCopied("The browser did not allow copying: reveal the password and copy it by hand.");
    }
    const wait = clipboardClearMs();
    setCopied(`Copied. The clipboard will be cleared in ${Math.round(wait / 1000)} seconds.`);
    setTimeout(async () => {
      // Only if it still holds what was copied here.
      const now = await navigator.clipboard.readText().catch(() => password);
      if (now === password) await navigator.clipboard.writeText("").catch(() => undefined);
      setCopied("The clipboard was cleared.");
    }, wait);
  };
  return (
    <div class="card" aria-label={`Item ${item.name}`} role="region">
      <h3>{item.name}</h3>
      <dl>
        {Object.entries(item.fields)
          .filter(([k]) => k !== "password")
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        {password !== undefined && (
          <div>
            <dt>password</dt>
            <dd>
              <code data-testid="password">{revealed ? password : "••••••••••••"}</code>{" "}
              <button type="button" class="secondary" aria-pressed={revealed} onClick={() => setRevealed(!revealed)}>
                {revealed ? "Hide" : "Reveal"}
              </button>{" "}
              <button type="button" class="secondary" onClick={() => void copy()}>
                Copy password
              </button>
            </dd>
          </div>
        )}
      </dl>
      {copied && (
        <p role="status" class="note">
          {copied}
        </p>
      )}
      <p class="meta">
        Revision {item.revision} · changed {new Date(item.updatedAt).toLocaleString()}
      </p>
      <button type="button" onClick={onEdit}>
        Edit
      </button>{" "}
      <button type="button" class="danger" onClick={onDelete}>
        Delete
      </button>
    </div>
  );
}

function ItemForm({
  item,
  busy,
  onSave,
  onCancel,
}: {
  item?: Item;
  busy: boolean;
  onSave(content: { name: string; fields: Record<string, string> }): void;
  onCancel(): void;
}) {
  const [name, setName] = useState(item?.name ?? "");
  const [username, setUsername] = useState(item?.fields.username ?? "");
  const [password, setPassword] = useState(item?.fields.password ?? "");
  const [url, setUrl] = useState(item?.fields.url ?? "");
  const [notes, setNotes] = useState(item?.fields.notes ?? "");
  const [shown, setShown] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    const fields: Record<string, string> = { ...(item?.fields ?? {}) };
    for (const [k, v] of Object.entries({ username, password, url, notes })) {
      if (v) fields[k] = v;
      else delete fields[k];
    }
    onSave({ name, fields });
  };
  return (
    <form onSubmit={submit} class="card" aria-label={item ? `Edit ${item.name}` : "New item"}>
      <h3>{item ? `Edit ${item.name}` : "New item"}</h3>
      <Field id="item-name" label="Name">
        <input id="item-name" required value={name} onInput={(e) => setName(inputValue(e))} />
      </Field>
      <Field id="item-username" label="Username">
        <input id="item-username" autocomplete="off" value={username} onInput={(e) => setUsername(inputValue(e))} />
      </Field>
      <Field id="item-password" label="Password">
        <input
          id="item-password"
          type={(shown ? "text" : "password") as "password"}
          autocomplete="new-password"
          value={password}
          onInput={(e) => setPassword(inputValue(e))}
        />
      </Field>
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setPassword(generatePassword(24));
            setShown(true);
          }}
        >
          Generate a password
        </button>{" "}
        <button type="button" class="secondary" aria-pressed={shown} onClick={() => setShown(!shown)}>
          {shown ? "Hide password" : "Show password"}
        </button>
      </p>
      <Field id="item-url" label="Website">
        <input id="item-url" type="url" value={url} onInput={(e) => setUrl(inputValue(e))} />
      </Field>
      <Field id="item-notes" label="Notes">
        <textarea id="item-notes" value={notes} onInput={(e) => setNotes(inputValue(e))} />
      </Field>
      <button type="submit" disabled={busy}>
        Save item
      </button>{" "}
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

function MemberRow(props: {
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
function ShareForm(props: { vaultId: string; candidates: OrgMember[]; onShared(email: string): void; onTrusted(): void }) {
  const { vaultId, candidates } = props;
  const client = currentClient();
  const [userId, setUserId] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");
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
          <Field id="share-role" label="Role">
            <select id="share-role" value={role} onChange={(e) => setRole(inputValue(e) as "member" | "admin")}>
              <option value="member">member</option>
              <option value="admin">admin</option>
            </select>
          </Field>
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

/**
 * A vault without a signed member history: the owner says who should hold it; anyone unchecked is
 * removed, then a new key is made for those kept alone (the SDK's adoptRoster, a rekey).
 */
function Adopt(props: { vault: Vault; members: MemberEntry[]; email(id: string): string; me: string; onAdopted(): void }) {
  const client = currentClient();
  // Nobody but the owner is checked to begin with: each member kept is one the owner vouches for.
  const [keep, setKeep] = useState<Set<string>>(() => new Set([props.me]));
  const [progress, setProgress] = useState<RekeyProgress | null>(null);
  const action = useAction();
  useEffect(() => setKeep(new Set([props.me])), [props.members]);
  if (!mayDo(props.vault.role, "adoptRoster"))
    return (
      <div class="warning" role="alert" data-testid="unsigned-vault">
        <p>
          This vault has no signed member history: its member list is only the server's word. Nothing can be added to it or shared until an
          owner adopts it.
        </p>
      </div>
    );
  const adopt = () =>
    action.run(async () => {
      for (const m of props.members) if (!keep.has(m.userId)) await client.removeMember(props.vault.vaultId, m.userId);
      try {
        // The name shown above is the one the owner confirms: the adopt link signs it.
        // The members and roles shown are the ones the owner confirms: a list the server changes by then is refused.
        const members = props.members.filter((m) => keep.has(m.userId)).map((m) => ({ userId: m.userId, role: m.role }));
        await client.adoptRoster(props.vault.vaultId, { members, name: props.vault.vaultName }, { onProgress: setProgress });
      } finally {
        setProgress(null);
      }
      props.onAdopted();
    });
  return (
    <div class="warning" role="region" aria-label="Adopt this vault" data-testid="unsigned-vault">
      <p>
        This vault has no signed member history: its member list is only the server's word, and nothing can be added to it or shared until
        you adopt it. Check each person who should hold it, in the role shown: a new key is made for them alone, and everyone unchecked is
        removed. Adopting also signs its name, <strong>{props.vault.vaultName}</strong>: rename it first if that is not its name.
      </p>
      <ul class="list">
        {props.members.map((m) => (
          <li key={m.userId}>
            <label>
              <input
                type="checkbox"
                checked={keep.has(m.userId)}
                disabled={m.userId === props.me}
                onChange={(e) => {
                  const next = new Set(keep);
                  if ((e.target as HTMLInputElement).checked) next.add(m.userId);
                  else next.delete(m.userId);
                  setKeep(next);
                }}
              />{" "}
              {props.email(m.userId)} ({m.role})
            </label>
          </li>
        ))}
      </ul>
      <button type="button" onClick={() => void adopt()} disabled={action.busy}>
        Adopt: new key for the checked members
      </button>
      {progress && (
        <p role="status">
          {PHASES[progress.phase]}: {progress.done} of {progress.total}
        </p>
      )}
      <ErrorNote error={action.error} />
    </div>
  );
}

function VaultSettings({ vault, onRenamed }: { vault: Vault; onRenamed(): void }) {
  const client = currentClient();
  const [name, setName] = useState(vault.vaultName);
  const action = useAction();
  return (
    <section aria-labelledby="settings-heading">
      <h2 id="settings-heading">Vault settings</h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await client.renameVault(vault.vaultId, name);
            onRenamed();
          });
        }}
      >
        <Field id="rename-vault" label="Vault name">
          <input id="rename-vault" required maxLength={256} value={name} onInput={(e) => setName(inputValue(e))} />
        </Field>
        <button type="submit" disabled={action.busy}>
          Rename
        </button>
      </form>
      {mayDo(vault.role, "delete") && (
        <button
          type="button"
          class="danger"
          onClick={() => {
            if (confirm(`Delete "${vault.vaultName}" and all its items for every member? This cannot be undone.`)) {
              void action.run(async () => {
                await client.deleteVault(vault.vaultId);
                go("#/vaults");
              });
            }
          }}
        >
          Delete this vault
        </button>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}
