/**
 * Every item of every vault the user can open, opened once after unlock and kept in the service
 * worker's memory (never in storage): a login index by registrable domain for the menus
 * (sdk/autofill), a search index for the popup (sdk/search.ts). Read again in the background when
 * older than a minute, and after each save.
 *
 * Vaults come from the checked listing (`vaults.listChecked`): a vault whose signed roster does not
 * verify, or whose name the server changed, is left out of filling and saving, and the popup says
 * why. A listing that leaves out a vault this device knew (`VaultListChanged`) is used as listed,
 * and the popup says that too: filling from what is there is safe, the warning is the point.
 */
import {
  itemUrls,
  SecurityError,
  sentence,
  VaultListChanged,
  type CheckedVault,
  type Item,
  type ItemUrl,
  type VaultClient,
} from "../../../sdk";
import { ItemSearch } from "../../../sdk/search";
import type { Passkey } from "../../../sdk/passkeys/passkey";
import { LoginIndex } from "../../../sdk/autofill";
import type { ItemSummary } from "../messages";

const FRESH_MS = 60_000;

export interface Entry extends ItemSummary {
  urls: ItemUrl[];
}

export class OpenedItems {
  private loaded: Promise<void> | undefined;
  private loadedAt = 0;
  private items = new Map<string, Item>();
  private entries = new Map<string, Entry>();
  private vaults: CheckedVault[] = [];
  private logins = new LoginIndex<Entry>([]);
  private search = new ItemSearch();
  /** Why something is not shown or not used, as a sentence for the popup. */
  problem: string | undefined;

  constructor(private readonly client: VaultClient) {}

  /** Loaded at least once; read again in the background when stale. */
  async ready(): Promise<void> {
    const before = this.loaded;
    if (!before) {
      // The first read is awaited; one that fails is tried again at the next use.
      const loading = this.load();
      this.loaded = loading;
      loading.catch(() => (this.loaded = undefined));
    } else if (Date.now() - this.loadedAt > FRESH_MS) {
      // A later one runs in the background: the menus answer from what was read before.
      this.loadedAt = Date.now();
      void this.load().catch(() => undefined);
    }
    await this.loaded;
  }

  /** Reads everything again now (after a write of this extension's). */
  async reload(): Promise<void> {
    this.loaded = this.load();
    await this.loaded;
  }

  private async load(): Promise<void> {
    this.loadedAt = Date.now();
    let vaults: CheckedVault[];
    const problems: string[] = [];
    try {
      vaults = await this.client.vaults.listChecked();
    } catch (err) {
      if (!(err instanceof VaultListChanged)) throw err;
      vaults = err.listed;
      problems.push(sentence(err));
    }
    const usable = vaults.filter((v) => !v.problem && v.nameCheck.status !== "mismatch");
    for (const v of vaults) {
      if (v.problem) problems.push(`${v.nameCheck.name}: ${sentence(v.problem)}`);
      else if (v.nameCheck.status === "mismatch")
        problems.push(
          sentence(new SecurityError("NAME_MISMATCH", `the server calls "${v.nameCheck.name}" "${v.nameCheck.shown}": it is not used`)),
        );
    }
    const items = new Map<string, Item>();
    for (const vault of usable) {
      try {
        for (const item of await this.client.items.list(vault.vaultId)) items.set(`${item.vaultId}/${item.itemId}`, item);
      } catch (err) {
        problems.push(`${vault.nameCheck.name}: ${sentence(err)}`);
      }
    }
    const names = new Map(usable.map((v) => [v.vaultId, v.nameCheck.name]));
    const entries = new Map([...items].map(([key, item]) => [key, entryOf(key, item, names.get(item.vaultId) ?? "")]));
    this.items = items;
    this.entries = entries;
    this.vaults = usable;
    this.logins = new LoginIndex([...entries.values()].filter((e) => e.type === "login"));
    this.search = new ItemSearch([...items.values()]);
    this.problem = problems.length > 0 ? problems.join(" ") : undefined;
  }

  item(key: string): Item | undefined {
    return this.items.get(key);
  }

  summary(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  /** The logins whose websites match the page, by each website's match mode. */
  loginsFor(pageUrl: string): Entry[] {
    return this.logins.matches(pageUrl);
  }

  /** The registrable domains the logins are for, for the look-alike warning. */
  loginDomains(): Set<string> {
    return this.logins.domains();
  }

  ofType(type: "card" | "identity"): Entry[] {
    return [...this.entries.values()].filter((e) => e.type === type);
  }

  /** Every item matching the words, best first; every item by name with no words. */
  find(query: string, limit = 50): Entry[] {
    if (query.trim() === "") return [...this.entries.values()].sort((a, b) => a.name.localeCompare(b.name)).slice(0, limit);
    return this.search
      .search(query, { limit })
      .map((hit) => this.entries.get(`${hit.vaultId}/${hit.itemId}`))
      .filter((e): e is Entry => e !== undefined);
  }

  /** Every passkey of every item, with its item's key, for the passkey requests of pages (background/passkeys.ts). */
  passkeys(): Array<{ key: string; passkey: Passkey }> {
    return [...this.items].flatMap(([key, item]) => (item.passkeys ?? []).map((passkey) => ({ key, passkey })));
  }

  /** The vaults the user may save into: verified name, no rekey pending. */
  writable(): Array<{ vaultId: string; name: string }> {
    return this.vaults
      .filter((v) => v.nameCheck.status === "verified" && !v.rekeyRequired)
      .map((v) => ({ vaultId: v.vaultId, name: v.nameCheck.name }));
  }
}

function entryOf(key: string, item: Item, vaultName: string): Entry {
  const urls = itemUrls(item);
  return {
    key,
    vaultId: item.vaultId,
    itemId: item.itemId,
    vaultName,
    name: item.name,
    type: item.type,
    username: item.fields.username ?? item.fields.email ?? item.fields.cardholder ?? item.fields.fullName ?? "",
    website: urls[0]?.url,
    hasPassword: Boolean(item.fields.password),
    hasTotp: Boolean(item.totp),
    urls,
  };
}
