/** The vault page's state: what it read of the vault, what is open, and the changes it makes with their outcome. */
import { useEffect, useState } from "preact/hooks";
import {
  mayDo,
  type CheckedVault,
  type Item,
  type MemberEntry,
  type RekeyProgress,
  type VaultClient,
  type VerifiedRoster,
} from "../../../../sdk";
import { currentClient, useRefresh } from "../../session";
import { useAction } from "../../components/ui";
import { libraryNow, putVaultItems } from "../../library";
import { isOffline } from "../../offline";
import type { OrgMember } from "./members";

/** What the page read of the vault, all at once; `complete` once read here (not only seeded from the library). */
interface VaultData {
  vault: CheckedVault | null;
  items: Item[];
  members: MemberEntry[];
  org: OrgMember[];
  roster: VerifiedRoster | null;
  fingerprint: string | null;
  complete: boolean;
}

/**
 * What the page shows before its own read: the vault and its items as this session last read and
 * checked them (the library), so a vault of thousands of items is listed at once; its members,
 * history and fingerprint wait for the read.
 */
function seeded(vaultId: string): VaultData {
  const lib = libraryNow();
  const vault = lib.vaults?.find((v) => v.vaultId === vaultId) ?? null;
  const items = lib.items.get(vaultId);
  return {
    vault: items ? vault : null,
    items: items ? [...items] : [],
    members: [],
    org: [],
    roster: null,
    fingerprint: null,
    complete: false,
  };
}

/** Reads the vault, its items, its members (checked against its signed roster) and the organization's people; again on a refresh. */
function useVaultData(client: VaultClient, vaultId: string) {
  const [data, setData] = useState<VaultData>(() => seeded(vaultId));
  const [seededFor, setSeededFor] = useState(vaultId);
  if (seededFor !== vaultId) {
    setSeededFor(vaultId);
    setData(seeded(vaultId));
  }
  const load = useAction();
  const reload = () =>
    load.run(async () => {
      // Offline (offline.ts) the vault's own read cannot answer: the library holds the copy, with the edits made offline.
      if (isOffline()) {
        const copy = seeded(vaultId);
        if (!copy.vault) throw new Error("this vault's items are not in the copy this browser kept offline");
        return setData(copy);
      }
      const vault = await client.vaults.getChecked(vaultId);
      const [items, { members, roster }, people] = await Promise.all([
        client.items.list(vaultId),
        client.members.verified(vaultId),
        client.people.list(),
      ]);
      const org = people.map((p) => ({ userId: p.userId, email: p.email, problem: p.problem, stated: p.stated, removedAt: p.removedAt }));
      const fingerprint = roster ? await client.vaults.fingerprint(vaultId) : null;
      setData({ vault, items, members, org, roster, fingerprint, complete: true });
      putVaultItems(vaultId, items);
    });
  const refresh = useRefresh();
  useEffect(() => void reload(), [vaultId, refresh]);
  return { ...data, load, reload };
}

/** A change to the vault: a notice saying what it did, and a rekey's progress. */
function useChanges(client: VaultClient, vaultId: string, reload: () => Promise<void>) {
  const [progress, setProgress] = useState<RekeyProgress | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const act = useAction();
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
      const result = await client.vaults.rekey(vaultId, { onProgress: setProgress });
      setNotice(
        `Rekeyed: key version ${result.keyVersion}, ${result.items} items re-encrypted, wrapped for ${result.members} members${result.attempts > 1 ? ` (after ${result.attempts - 1} retries: the vault changed meanwhile)` : ""}.`,
      );
    } finally {
      setProgress(null);
    }
  };
  return { act, progress, notice, setNotice, change, rekeyNow, rekey: () => change(rekeyNow) };
}

export function useVault(vaultId: string, itemId?: string) {
  const client = currentClient();
  const data = useVaultData(client, vaultId);
  const changes = useChanges(client, vaultId, data.reload);
  // The item shown: the one the address names, else the one last opened here.
  const [open, setOpen] = useState<string | null>(itemId ?? null);
  useEffect(() => setOpen(itemId ?? null), [vaultId, itemId]);
  const [editing, setEditing] = useState<Item | "new" | null>(null);
  // Whose exposure is shown: someone just removed, or one asked about from the member history.
  const [exposureFor, setExposureFor] = useState<string | null>(null);
  // An email is shown for a user only where their keys and identity check out (else their id).
  const email = (userId: string) => data.org.find((p) => p.userId === userId && !p.problem)?.email ?? userId;
  // What the page offers is what the role table allows (the SDK's, which the server enforces).
  const may = (action: Parameters<typeof mayDo>[1]) => data.vault !== null && mayDo(data.vault.role, action);
  return {
    client,
    vaultId,
    me: client.account.userId,
    ...data,
    ...changes,
    open,
    setOpen,
    editing,
    setEditing,
    exposureFor,
    setExposureFor,
    email,
    may,
  };
}

/** The vault page's state, as its parts receive it. */
export type VaultState = ReturnType<typeof useVault>;
