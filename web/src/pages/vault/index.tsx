/**
 * One vault: a heading, then one tab at a time (its items as a list beside the item open, its
 * members, its signed member history, import and export, trash, settings), each on its own route
 * (`#/vault/<id>/<tab>`; `#/vault/<id>/<itemId>` opens an item). The state is `useVault`'s.
 */
import { ErrorNote, Busy } from "../../components/ui";
import { go } from "../../session";
import { useVault, type VaultState } from "./use-vault";
import { VaultHeading } from "./heading";
import { Adopt } from "./adopt";
import { RekeyProgressBar, RekeyWarning } from "./rekey";
import { ItemsSection } from "./items";
import { Trash } from "./trash";
import { Transfer } from "./transfer";
import { MembersSection } from "./members";
import { Exposure } from "./exposure";
import { MemberHistory } from "./member-history";
import { VaultSettings } from "./settings";

/** The tabs after Items, by route; an unknown third part of the route is an item's id. */
const TABS = {
  members: "Members",
  history: "Member history",
  transfer: "Import and export",
  trash: "Trash",
  settings: "Settings",
} as const;
type Tab = keyof typeof TABS;
const isTab = (sub?: string): sub is Tab => sub !== undefined && Object.hasOwn(TABS, sub);

export function VaultPage({ vaultId, sub }: { vaultId: string; sub?: string }) {
  const tab = isTab(sub) ? sub : null;
  const state = useVault(vaultId, tab ? undefined : sub);
  const { vault, load, act } = state;
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
  const shown = (Object.keys(TABS) as Tab[]).filter(
    (t) => (t !== "members" || vault.vaultType === "shared") && (t !== "settings" || state.may("rename")),
  );
  return (
    <main class={tab ? undefined : "vault-items"}>
      <VaultHeading vault={vault} signed={state.roster !== null} fingerprint={state.fingerprint} />
      <nav aria-label="This vault" class="tabs">
        <a href={`#/vault/${vaultId}`} aria-current={tab === null ? "page" : undefined}>
          Items
        </a>
        {shown.map((t) => (
          <a key={t} href={`#/vault/${vaultId}/${t}`} aria-current={tab === t ? "page" : undefined}>
            {TABS[t]}
          </a>
        ))}
      </nav>
      <VaultNotices state={state} />
      <ErrorNote error={load.error} />
      {/* While the item dialog is open, its errors show in it, not behind it. */}
      {state.editing === null && <ErrorNote error={act.error} />}
      <TabContent tab={tab} state={state} />
    </main>
  );
}

/** What the vault needs of the person, on every tab: adopting a signed history, a rekey, and what a change did. */
function VaultNotices({ state }: { state: VaultState }) {
  const { vault } = state;
  if (!vault) return null;
  return (
    <>
      {/* Only once read here: before, the roster is not missing, only not read yet. */}
      {state.complete && !state.roster && (
        <Adopt
          vault={vault}
          members={state.members}
          email={state.email}
          me={state.me}
          onAdopted={() => {
            state.setNotice("The vault has a signed member history now, and a new key for the members you kept.");
            void state.reload();
          }}
        />
      )}
      {state.notice && (
        <p class="note" role="status">
          {state.notice}
        </p>
      )}
      {vault.rekeyRequired && <RekeyWarning state={state} />}
      {state.progress && <RekeyProgressBar progress={state.progress} />}
    </>
  );
}

function TabContent({ tab, state }: { tab: Tab | null; state: VaultState }) {
  const { vault, vaultId, reload, email } = state;
  if (!vault) return null;
  const exposure = state.exposureFor && (
    <Exposure vaultId={vaultId} userId={state.exposureFor} who={email(state.exposureFor)} version={state.items} />
  );
  // The items show from the library at once; the other tabs need the vault's own read (members, signed history).
  if (tab !== null && !state.complete) return <Busy label="Reading the vault…" />;
  switch (tab) {
    case null:
      return <ItemsSection state={state} />;
    case "members":
      return (
        <>
          <MembersSection state={state} vault={vault} />
          {exposure}
        </>
      );
    case "history":
      return (
        <>
          <MemberHistory roster={state.roster} me={state.me} email={email} onExposure={state.setExposureFor} />
          {exposure}
        </>
      );
    case "transfer":
      return <Transfer vaultId={vaultId} vaultName={vault.nameCheck.name} onImported={() => void reload()} />;
    case "trash":
      return (
        <Trash vaultId={vaultId} version={state.items} onRestored={(i) => void reload().then(() => go(`#/vault/${vaultId}/${i.itemId}`))} />
      );
    case "settings":
      return <VaultSettings vault={vault} onRenamed={() => void reload()} />;
  }
}
