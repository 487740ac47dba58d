/**
 * A grant opened, in the client that took it up as the grantor (`asGrantor`: memory only, and
 * dropped with this page). Read: the grantor's vaults and items, read-only, each shown with the
 * item view (its secrets masked until revealed, copied and cleared); the session cannot write, and
 * ends when its access token does. Take over: a new master password for the account, after which
 * it is the grantee's to sign in to; the grantee's own session here stays as it is.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, InputError, sentence, type CheckedVault, type Item, type VaultClient } from "../../../../sdk";
import type { EmergencyRelease } from "../../../../sdk/client";
import { Busy, ErrorNote, nextPaint, PasswordField, Submit, useAction } from "../../components/ui";
import { ItemView } from "../vault/item-view";

export interface Opened {
  release: EmergencyRelease;
  asGrantor: VaultClient;
}

export function OpenedAccess({ opened, onClose }: { opened: Opened; onClose(): void }) {
  const { release, asGrantor } = opened;
  const email = release.grantor.email;
  return (
    <section aria-labelledby="opened-heading">
      <h2 id="opened-heading">{email}&apos;s account</h2>
      <p>
        <button type="button" class="secondary" onClick={onClose}>
          Back to emergency access
        </button>
      </p>
      {release.level === "read" ? <ReadOnlyVaults asGrantor={asGrantor} email={email} /> : <Takeover asGrantor={asGrantor} email={email} />}
    </section>
  );
}

/** A session that ended (its time ran out, or the grantor refused or revoked) said as such, not as a failed login. */
function ended(err: unknown, email: string): unknown {
  return err instanceof ApiError && err.status === 401
    ? new InputError(`This emergency session ended: its time ran out, or ${email} refused or revoked it. Open it again from the list.`)
    : err;
}

interface VaultRead {
  vault: CheckedVault;
  items: Item[];
  problem?: string;
}

/** Every vault of the grantor with its items, one vault after another; one that fails to open says why, and the others show. */
async function readAll(asGrantor: VaultClient): Promise<VaultRead[]> {
  const read: VaultRead[] = [];
  for (const vault of await asGrantor.vaults.listChecked()) {
    try {
      read.push({ vault, items: await asGrantor.items.list(vault.vaultId) });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw err;
      read.push({ vault, items: [], problem: sentence(err) });
    }
  }
  return read;
}

/** An item as shown here: without its files (their downloads go through the signed-in session) nor tags (links to this user's lists). */
function shownPart(item: Item): Item {
  const { attachments: _files, tags: _tags, ...shown } = item;
  return shown;
}

function ReadOnlyVaults({ asGrantor, email }: { asGrantor: VaultClient; email: string }) {
  const [vaults, setVaults] = useState<VaultRead[] | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const load = useAction();
  useEffect(
    () =>
      void load.run(async () => {
        try {
          setVaults(await readAll(asGrantor));
        } catch (err) {
          throw ended(err, email);
        }
      }),
    [asGrantor],
  );
  return (
    <>
      <p class="note">
        Read-only: {email}&apos;s vaults and items as they are now. Nothing can be changed from here, and files on items are not shown. This
        session ends after a while: open it again from the list.
      </p>
      {load.busy && <Busy label={`Opening ${email}'s vaults…`} />}
      <ErrorNote error={load.error} />
      {vaults?.length === 0 && <p>{email} has no vaults.</p>}
      {(vaults ?? []).map(({ vault, items, problem }) => (
        <section key={vault.vaultId} aria-label={`Vault ${vault.nameCheck.name}`}>
          <h3>{vault.nameCheck.name}</h3>
          <ErrorNote error={problem ?? null} />
          {!problem && items.length === 0 && <p class="meta">No items.</p>}
          <ul class="list item-list" aria-label={`Items of ${vault.nameCheck.name}`}>
            {items.map((i) => (
              <li key={i.itemId}>
                <button
                  type="button"
                  class="row"
                  aria-current={chosen === i.itemId ? "true" : undefined}
                  onClick={() => setChosen(i.itemId)}
                >
                  <span class="name">{i.name}</span>
                  <span class="meta">{i.fields.username ?? ""}</span>
                </button>
              </li>
            ))}
          </ul>
          {items
            .filter((i) => i.itemId === chosen)
            .map((i) => (
              <ItemView key={i.itemId} item={shownPart(i)} />
            ))}
        </section>
      ))}
    </>
  );
}

function Takeover({ asGrantor, email }: { asGrantor: VaultClient; email: string }) {
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      if (password !== again) throw new InputError("The two passwords are not the same: type the new master password twice.");
      await nextPaint();
      const result = await asGrantor.completeTakeover(password).catch((err: unknown) => Promise.reject(ended(err, email)));
      setPassword("");
      setAgain("");
      setDone(
        `${email}'s account is yours now: sign in as ${email} with the new master password (log out here first, or use another browser). ` +
          `${result.sessionsEnded} of its session${result.sessionsEnded === 1 ? "" : "s"} ended, and its second factors and passkeys were removed. You are still signed in as yourself here.`,
      );
    });
  };
  if (done)
    return (
      <p class="note" role="status">
        {done}
      </p>
    );
  return (
    <form aria-label="Take the account over" onSubmit={submit}>
      <p>
        Choose a new master password for {email}&apos;s account. Its vaults and items stay as they are; its other sessions end, its second
        factors and passkeys are removed, and it gets new keys.
      </p>
      <PasswordField id="takeover-new" label="New master password" autocomplete="off" required value={password} onInput={setPassword} />
      <PasswordField id="takeover-again" label="New master password, again" autocomplete="off" required value={again} onInput={setAgain} />
      <Submit busy={act.busy}>Take over {email}&apos;s account</Submit>
      {act.busy && <Busy label="Setting the new password and making the account new keys: this takes a moment…" />}
      <ErrorNote error={act.error} />
    </form>
  );
}
