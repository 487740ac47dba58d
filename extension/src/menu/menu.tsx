/**
 * The inline menu under a focused field, and the offer bar after a login form was sent: an
 * extension page drawn in the web page (content/overlay.ts). It knows only its token; the service
 * worker tells it what to list and does the fill. Clicks count only when trusted and when the
 * menu has been on screen for a moment, so a page cannot click it for the user or slip it under
 * a click meant for something else.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ask, type FieldKind, type ItemSummary, type MenuData, type OfferView, type PasskeyChoice, type PasskeyView } from "../messages";
import "../styles.css";

const token = location.hash.slice(1);
const shownAt = Date.now();
/** The buttons take no click sooner than this after the menu appeared: such a click was aimed at what the menu now covers. */
const SETTLE_MS = 400;

/**
 * Whether the browser saw the whole menu unobstructed at the last look: Chromium's visibility
 * tracking (IntersectionObserver v2) says no when anything of the page lies over the frame, even
 * an overlay that lets clicks through, or when the page made the frame transparent or transformed.
 */
let unobstructed = false;
const visibility = new IntersectionObserver(
  (entries) => {
    // A browser without the tracking (Firefox) leaves the check to the content script's (content/overlay.ts).
    for (const entry of entries)
      unobstructed = (entry as IntersectionObserverEntry & { isVisible?: boolean }).isVisible ?? entry.isIntersecting;
  },
  { threshold: [0, 1], trackVisibility: true, delay: 100 } as IntersectionObserverInit,
);
visibility.observe(document.body);

const deliberate = (event: MouseEvent | KeyboardEvent) => event.isTrusted && Date.now() - shownAt >= SETTLE_MS;
const COVERED = "Something on the page covered this menu, so nothing was done: the page may be trying to trick you into a click.";

/** False until the menu has been on screen for SETTLE_MS: its buttons are disabled until then. */
function useSettled(): boolean {
  const [settled, setSettled] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(true), SETTLE_MS - (Date.now() - shownAt));
    return () => clearTimeout(timer);
  }, []);
  return settled;
}

/** What the service worker answers a choice in the menu: what was done, or why nothing was. */
interface Done {
  refused?: string;
  filled?: number;
  code?: string;
  saved?: string;
  updated?: string;
  passkeySaved?: string;
  signedIn?: string;
}

/** What the menu says after a choice that saved or signed in. */
function doneText(done: Done): string | undefined {
  if (done.saved) return `Saved a login for ${done.saved}.`;
  if (done.updated) return `Updated the password of ${done.updated}.`;
  if (done.passkeySaved) return `Saved a passkey for ${done.passkeySaved}.`;
  if (done.signedIn) return `Signed in to ${done.signedIn} with a passkey.`;
  return undefined;
}

function Menu() {
  const [data, setData] = useState<MenuData | undefined>();
  const [said, setSaid] = useState<{ text: string; error?: boolean } | undefined>();
  const settled = useSettled();
  useEffect(() => {
    ask<MenuData>({ kind: "menu-data", token }).then(setData, (err: Error) => setSaid({ text: err.message, error: true }));
  }, []);
  const act = (run: () => Promise<Done>) => async (event: MouseEvent) => {
    if (!deliberate(event)) return;
    if (!unobstructed) return setSaid({ text: COVERED, error: true });
    try {
      const result = await run();
      if (result.refused) return setSaid({ text: result.refused, error: true });
      if (result.code) await copyCode(result.code, setSaid);
      const text = doneText(result);
      if (text) setSaid({ text });
    } catch (err) {
      setSaid({ text: (err as Error).message, error: true });
    }
  };
  if (said)
    return (
      <p class={said.error ? "error" : ""} role={said.error ? "alert" : "status"}>
        {said.text}
      </p>
    );
  if (!data) return <p class="meta">Loading…</p>;
  if (data.mode === "locked") return <p>Vault is locked. Open the Vault extension to unlock it.</p>;
  if (data.mode === "gone") return <p>This menu has expired: click the field again.</p>;
  if (data.mode === "offer") return <Offer offer={data.offer} act={act} settled={settled} />;
  if (data.mode === "passkey") return <PasskeyPrompt view={data.passkey} act={act} settled={settled} />;
  return (
    <nav aria-label={`Vault: logins for ${data.site}`}>
      {data.refusal && (
        <p class="warning" role="alert">
          {data.refusal}
        </p>
      )}
      {data.entries.length === 0 && !data.refusal && data.fieldKind !== "new-password" && <p>{NOTHING[data.fieldKind]}</p>}
      {data.entries.map((e) => (
        <Choice
          key={e.key}
          entry={e}
          code={data.fieldKind === "code"}
          settled={settled}
          onClick={act(() => ask({ kind: "menu-fill", token, key: e.key }))}
        />
      ))}
      {data.fieldKind === "new-password" && (
        <button type="button" class="choice" disabled={!settled} onClick={act(() => ask({ kind: "menu-generate", token }))}>
          Generate a password
        </button>
      )}
    </nav>
  );
}

const NOTHING: Record<FieldKind, string> = {
  login: "No login is saved for this site.",
  "new-password": "",
  code: "No one-time code is saved for this site.",
  card: "No card is saved in your vaults.",
  identity: "No identity is saved in your vaults.",
};

function Choice({
  entry,
  code,
  settled,
  onClick,
}: {
  entry: ItemSummary;
  code: boolean;
  settled: boolean;
  onClick: (e: MouseEvent) => void;
}) {
  return (
    <button type="button" class="choice" disabled={!settled} onClick={onClick}>
      {code ? `Fill the code of ${entry.name}` : entry.name}
      <span class="meta">
        {entry.username || "(no username)"} · {entry.vaultName}
      </span>
    </button>
  );
}

type Act = (run: () => Promise<Record<string, unknown>>) => (event: MouseEvent) => Promise<void>;

function Offer({ offer, act, settled }: { offer: OfferView; act: Act; settled: boolean }) {
  const [vaultId, setVaultId] = useState(offer.vaults[0]?.vaultId ?? "");
  const dismiss = act(() => ask({ kind: "offer-dismiss", token }));
  if (offer.kind === "update")
    return (
      <section aria-label="Vault: update this login">
        <p>
          Update the password of {offer.item?.name} ({offer.username}) for {offer.site}?
        </p>
        <div class="row">
          <button type="button" disabled={!settled} onClick={act(() => ask({ kind: "offer-update", token }))}>
            Update
          </button>
          <button type="button" class="secondary" onClick={dismiss}>
            Not now
          </button>
        </div>
      </section>
    );
  return (
    <section aria-label="Vault: save this login">
      <p>
        Save the login {offer.username ? `of ${offer.username} ` : ""}for {offer.site}?
      </p>
      <div class="row">
        <VaultSelect vaults={offer.vaults} value={vaultId} onChange={setVaultId} />
        <button type="button" disabled={!vaultId || !settled} onClick={act(() => ask({ kind: "offer-save", token, vaultId }))}>
          Save
        </button>
        <button type="button" class="secondary" onClick={dismiss}>
          Not now
        </button>
      </div>
    </section>
  );
}

/** The vaults a save may go into, by their verified names. */
function VaultSelect({ vaults, value, onChange }: { vaults: OfferView["vaults"]; value: string; onChange(vaultId: string): void }) {
  return (
    <>
      <label for="vault">Vault</label>
      <select id="vault" value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {vaults.map((v) => (
          <option key={v.vaultId} value={v.vaultId}>
            {v.name}
          </option>
        ))}
      </select>
    </>
  );
}

/** A page asked for a passkey: save a new one into a vault, or sign in with one the vault holds; or let the browser answer. */
function PasskeyPrompt({ view, act, settled }: { view: PasskeyView; act: Act; settled: boolean }) {
  const [vaultId, setVaultId] = useState(view.op === "create" ? (view.vaults[0]?.vaultId ?? "") : "");
  const choose = (choice: PasskeyChoice) => act(() => ask({ kind: "passkey-choose", token, choice }));
  const decline = (
    <button type="button" class="secondary" disabled={!settled} onClick={choose({ decline: true })}>
      Use another way
    </button>
  );
  if (view.op === "create")
    return (
      <section aria-label="Vault: save a passkey">
        <p>
          Save a passkey for {view.site}
          {view.user ? ` as ${view.user}` : ""}?
        </p>
        <div class="row">
          <VaultSelect vaults={view.vaults} value={vaultId} onChange={setVaultId} />
          <button type="button" disabled={!vaultId || !settled} onClick={choose({ save: vaultId })}>
            Save passkey
          </button>
          {decline}
        </div>
      </section>
    );
  return (
    <nav aria-label={`Vault: sign in to ${view.site} with a passkey`}>
      {view.choices.map((c) => (
        <button key={c.key} type="button" class="choice" disabled={!settled} onClick={choose({ use: c.key })}>
          {c.user || c.name}
          <span class="meta">
            {c.name} · {c.vaultName}
          </span>
        </button>
      ))}
      {decline}
    </nav>
  );
}

/** After a login with a one-time code: the code on the clipboard, shown too in case the copy was refused. */
async function copyCode(code: string, say: (s: { text: string }) => void): Promise<void> {
  try {
    await navigator.clipboard.writeText(code);
    await ask({ kind: "copied" }).catch(() => undefined);
    say({ text: `Filled. The one-time code ${code} is copied.` });
  } catch {
    say({ text: `Filled. The one-time code is ${code}.` });
  }
}

render(<Menu />, document.getElementById("app")!);
