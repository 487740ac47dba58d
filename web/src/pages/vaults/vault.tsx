/** One vault: its items, members, sharing, rekey, fingerprint and signed member history. */
import { useEffect, useState } from "preact/hooks";
import {
  describeLink,
  mayDo,
  type CheckedVault,
  type Item,
  type MemberEntry,
  type RekeyProgress,
  type VerifiedRoster,
} from "../../../../sdk";
import { currentClient, go, useRefresh } from "../../session";
import { Busy, ErrorNote, Field, inputValue, useAction } from "../../ui";
import { favouritesFirst, useItemSearch } from "./search";
import { NameFlag } from "./vault-list";
import { ItemView } from "./items";
import { ItemForm } from "./item-form";
import { type OrgMember, MemberRow, ShareForm } from "./members";
import { Adopt, PHASES } from "./adopt";
import { VaultSettings } from "./settings";
import { ItemHistory, Trash } from "./past";
import { Transfer } from "./transfer";
import { Exposure } from "./exposure";

export function VaultPage({ vaultId, itemId }: { vaultId: string; itemId?: string }) {
  const client = currentClient();
  const me = client.account.userId;
  const [vault, setVault] = useState<CheckedVault | null>(null);
  const [items, setItems] = useState<Item[]>([]);
  const [members, setMembers] = useState<MemberEntry[]>([]);
  const [org, setOrg] = useState<OrgMember[]>([]);
  const [roster, setRoster] = useState<VerifiedRoster | null>(null);
  const [fingerprint, setFingerprint] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(itemId ?? null);
  const [query, setQuery] = useState("");
  const found = useItemSearch(items, query);
  useEffect(() => setOpen(itemId ?? null), [vaultId, itemId]);
  const [editing, setEditing] = useState<Item | "new" | null>(null);
  const [progress, setProgress] = useState<RekeyProgress | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [exposureFor, setExposureFor] = useState<string | null>(null);
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
      setOrg(people.map((p) => ({ userId: p.userId, email: p.email, problem: p.problem, stated: p.stated, removedAt: p.removedAt })));
      setRoster(chain);
      setFingerprint(chain ? await client.vaultFingerprint(vaultId) : null);
    });
  const refresh = useRefresh();
  useEffect(() => void reload(), [vaultId, refresh]);

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
        {items.length > 0 && (
          <Field id="item-search" label="Search items">
            <input id="item-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
          </Field>
        )}
        {found && found.length === 0 && <p>No item matches your search.</p>}
        <ul class="list" aria-label="Items">
          {(found ?? favouritesFirst(items)).map((i) => (
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
                {i.favorite ? "★ " : ""}
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
              if (confirm(`Move "${item.name}" to the trash? Members can restore it from there until it is purged.`))
                void change(async () => {
                  await client.deleteItem(vaultId, item.itemId);
                  setOpen(null);
                });
            }}
          />
        )}
        {item && editing === null && (
          <ItemHistory vaultId={vaultId} item={item} onRestored={(i) => void reload().then(() => setOpen(i.itemId))} />
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

      <Trash vaultId={vaultId} version={items} onRestored={(i) => void reload().then(() => setOpen(i.itemId))} />
      <Transfer vaultId={vaultId} vaultName={vault.nameCheck.name} onImported={() => void reload()} />

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
                      setExposureFor(m.userId);
                    });
                  }}
                />
              ))}
            </tbody>
          </table>
          {may("addMember") && (
            <ShareForm
              vaultId={vaultId}
              candidates={org.filter((p) => !p.removedAt && !members.some((m) => m.userId === p.userId))}
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

      {exposureFor && <Exposure vaultId={vaultId} userId={exposureFor} who={email(exposureFor)} version={items} />}

      <section aria-labelledby="history-heading">
        <h2 id="history-heading">Member history</h2>
        {roster ? (
          <ol class="history">
            {roster.links.map((l) => (
              <li key={l.seq}>
                <time dateTime={l.at}>{new Date(l.at).toLocaleString()}</time> {email(l.actorId)} {describeLink(l, email)}
                {l.op === "remove" && l.subjectId && l.subjectId !== me && (
                  <>
                    {" "}
                    <button type="button" class="secondary" onClick={() => setExposureFor(l.subjectId!)}>
                      What {email(l.subjectId)} could read
                    </button>
                  </>
                )}
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
