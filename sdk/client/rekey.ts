/**
 * The rekey: a new vault key, every item re-encrypted under it, the key wrapped for exactly the
 * members the vault's verified roster names, all in one call that the server applies atomically.
 * Adopting a vault made without a roster is a rekey too: a fresh key, wrapped only for the members
 * its owner confirms, recorded in the `adopt` link that starts the vault's roster.
 */
import { fromBase64, toBase64, type Bytes } from "../../protocol/encoding";
import { ApiError, SecurityError } from "../errors";
import { openItem, sealItem, type SealedItem } from "../items";
import { keyFingerprint, type AccountKeys } from "../../protocol/crypto/keys";
import { AES_KEY_BYTES, aesKwWrap, ed25519Sign, randomBytes, rsaOaepWrap } from "../../protocol/crypto/primitives";
import { GENESIS_PREV, linkHash, memberDigest, rosterWraps, type RosterLink } from "../../protocol/formats/roster";
import { mayDo, type VaultRole } from "../../protocol/vault-roles";
import { itemSetDigest, itemStatesOf, type ItemLink, type ItemState } from "../../protocol/formats/item-log";
import { vaultMoved, type ClientCore } from "./core";
import { OvertakenReads, type Items } from "./items";
import type { FollowedLog } from "./item-log";
import type { History } from "./history";
import type { Members } from "./members";
import { rosterRaced, type Rosters } from "./roster";
import type { Trust } from "./trust";
import type { MemberEntry, RekeyProgress, RekeyResult, StoredItem, Vault, VerifiedRoster } from "./types";
import type { Vaults } from "./vaults";
import type { WrapLabels } from "./wrap-labels";
import type { WrapLabel } from "../../protocol/formats/roster-format";

const MAX_REKEY_ATTEMPTS = 5;

type NewKey = { userId: string; encryptedVaultKey: string; wrapSignature: string };

/** Answers to a rekey that mean the server applied nothing and is busy: the same body is sent again (`send`). */
const BUSY = [408, 429, 503];
/** How long a rekey is sent again while the server stays busy: within the removal's patience, not for ever. */
const REKEY_BUSY_FOR_MS = 120_000;

/** An item sealed under the new key, with the revision it was read at. */
type RekeyedItem = SealedItem & { revision: number };

/** What a rekey attempt decides from its read of the vault: the key it opens with, the recipients, and the roster link to sign. */
interface RekeyPlan {
  oldKey: Bytes;
  /** The verified roster of a signed vault (null while adopting): its items are checked against the signed item log. */
  roster: VerifiedRoster | null;
  recipients: string[];
  /** The key fingerprint the roster recorded for a recipient, which the keys used must have. */
  recordedKey: (userId: string) => string | undefined;
  link: (newKeys: NewKey[]) => Promise<RosterLink | undefined>;
}

export interface RekeyOptions {
  onProgress?: (p: RekeyProgress) => void;
  maxAttempts?: number;
}

/** What an owner confirms to adopt a vault: each member with their role (the owner too) and, to sign it, the vault's name. */
export interface AdoptConfirmation {
  members: Array<{ userId: string; role: VaultRole }>;
  name?: string;
}

export class Rekeys {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
    private readonly vaults: Vaults,
    private readonly members: Members,
    private readonly items: Items,
    private readonly history: History,
    private readonly labels: WrapLabels,
  ) {}

  /** A personal vault's new wrap names the account state it is made under (and is not made under an older one than this device verified). */
  private async labelFor(vault: Pick<Vault, "vaultType">): Promise<WrapLabel | undefined> {
    return vault.vaultType === "personal" ? this.labels.current() : undefined;
  }

  /**
   * A new vault key: every item opened under the old key and sealed under the new one, the new
   * key wrapped for every remaining member (their keys checked) and signed, all sent in one call.
   * When the vault changed meanwhile (409, or 400 for a member or item set that no longer
   * matches), it starts again from the beginning. The new key goes to exactly the members of the
   * verified roster, each under the keys the roster recorded, and a member list from the server
   * that differs from the roster is refused before anything is sent. A vault without a roster is
   * refused (`UNSIGNED_VAULT`): its member list is the server's word; its owner adopts it instead.
   */
  rekey(vaultId: string, opts: RekeyOptions = {}): Promise<RekeyResult> {
    return this.attempts(vaultId, opts, async (vault) => {
      // A member list that disagrees with the signed roster is refused here, before anything is sent.
      const { roster } = await this.members.verifiedMembers(vault.vaultId);
      if (!roster)
        throw new SecurityError(
          "UNSIGNED_VAULT",
          `vault "${vault.vaultName}" has no signed roster, so its member list is the server's word: ${mayDo(vault.role, "adoptRoster") ? "adopt it" : "ask an owner to adopt it"} (a rekey for the members confirmed) instead`,
        );
      if (roster.state.keyVersion !== vault.keyVersion) throw vaultMoved();
      const oldKey = await this.vaults.openVault(vault, roster);
      return {
        oldKey,
        roster,
        // The roster's members only, under the keys it recorded.
        recipients: [...roster.state.members.keys()],
        recordedKey: (userId) => roster.state.members.get(userId)?.key,
        link: async (newKeys) =>
          this.rosters.nextRosterLink(roster.state, {
            op: "rekey",
            keyVersion: vault.keyVersion + 1,
            memberDigest: await memberDigest(roster.state.members),
            wraps: await rosterWraps(newKeys, await this.labelFor(vault)),
          }),
      };
    });
  }

  /**
   * Gives a vault made without a roster a signed one. The server's member list of such a vault is
   * only its word, so the owner says who the members are (`members`, user ids, the owner
   * included): a list that differs from the server's is refused (`MEMBER_LIST_MISMATCH`), and
   * nothing is sent; remove anyone unwanted first. Then, as a rekey, a fresh key is wrapped for
   * exactly those members (their keys checked) and every item re-encrypted, with the `adopt` link
   * that starts the roster: no wrap the server handed out is vouched for. `name`, when given, is
   * the vault's name as the owner confirmed it (it must be the server's current one): the link
   * signs it; without it the name stays unvouched until someone renames the vault.
   */
  async adoptRoster(vaultId: string, confirmed: AdoptConfirmation, opts: RekeyOptions = {}): Promise<VerifiedRoster> {
    const existing = await this.rosters.verifiedRoster(vaultId);
    if (existing) return existing;
    const wanted = new Map(confirmed.members.map((m) => [m.userId, m.role]));
    await this.attempts(vaultId, opts, async (vault) => {
      if (!mayDo(vault.role, "adoptRoster"))
        throw new ApiError(403, "FORBIDDEN", `only an owner adopts a vault, and you are its ${vault.role}`);
      const listed = await this.members.members(vaultId);
      for (const problem of memberSetProblems(listed, wanted)) throw problem;
      if (confirmed.name !== undefined && confirmed.name !== vault.vaultName)
        throw new SecurityError(
          "NAME_MISMATCH",
          `the server calls the vault "${vault.vaultName}", not "${confirmed.name}" as you confirmed`,
        );
      const oldKey = await this.vaults.openVault(vault, null);
      const recipients = listed.map((m) => m.userId).sort();
      return {
        oldKey,
        roster: null,
        recipients,
        recordedKey: () => undefined,
        link: async (newKeys): Promise<RosterLink> => {
          const members = await Promise.all(
            listed.map(async (m) => ({ userId: m.userId, role: m.role, key: await keyFingerprint(await this.trust.keysOf(m.userId)) })),
          );
          return this.rosters.signRosterLink(
            {
              vaultId: vault.vaultId,
              seq: 0,
              prev: GENESIS_PREV,
              op: "adopt",
              actorId: this.core.account.userId,
              at: new Date().toISOString(),
              keyVersion: vault.keyVersion + 1,
              vaultType: vault.vaultType,
              ...(confirmed.name !== undefined && { name: confirmed.name }),
              members: members.sort((a, b) => (a.userId < b.userId ? -1 : 1)),
              wraps: await rosterWraps(newKeys, await this.labelFor(vault)),
            },
            null,
          );
        },
      };
    });
    return (await this.rosters.verifiedRoster(vaultId))!;
  }

  /**
   * The rekey's loop: plan (read the vault, decide recipients and link), re-encrypt, wrap, send;
   * again from a fresh read when the vault changed meanwhile.
   */
  private async attempts(vaultId: string, opts: RekeyOptions, plan: (vault: Vault) => Promise<RekeyPlan>): Promise<RekeyResult> {
    const keys = this.core.requireKeys();
    const maxAttempts = opts.maxAttempts ?? MAX_REKEY_ATTEMPTS;
    const progress = opts.onProgress ?? (() => {});
    const overtaken = new OvertakenReads(vaultId, maxAttempts);
    for (let attempt = 1; ; attempt++) {
      const retry = (err: unknown) => {
        if (err instanceof ApiError && err.status === 409 && attempt < maxAttempts) return undefined;
        throw err;
      };
      const vault = await this.vaults.getVault(vaultId);
      const planned = await plan(vault).catch(retry);
      if (!planned) continue;
      // On a signed vault, exactly the items its signed item log holds: a dropped item would otherwise be lost to the rekey.
      // The rekey link is signed on the head this listing was checked at: any item write after it
      // (a restore, an edit, a delete meanwhile) makes the server refuse it (409), and the rekey reads again.
      const { stored, log } = await this.items.listCheckedItemsAt(vaultId, vault, planned.roster);
      // Another rekey landed between the read of the vault and the listing: its items are under a
      // newer key than the one planned with, so the rekey starts again from a fresh read.
      if (overtaken.listed(stored, vault, attempt)) {
        // Apart a little, so that two admins who keep overtaking each other do not meet again.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
        continue;
      }
      const newKey = randomBytes(AES_KEY_BYTES);
      const items = await this.resealItems(vaultId, planned.oldKey, newKey, stored, progress);
      // What the vault keeps of its items' past, re-encrypted too: what is left out, the server drops.
      const { history, trash } = await this.resealPast(vaultId, planned.oldKey, newKey);
      const newKeys = await this.wrapFor(keys, vault, planned, newKey, progress);
      const rosterLink = await planned.link(newKeys);
      const signed = await this.signItemRekey(vault, log, items, rosterLink, planned.roster);
      const body = { newKeys, items, history, trash, rosterLink, itemLink: signed?.itemLink };
      if (!(await this.send(vault, body, attempt < maxAttempts, progress))) continue;
      await this.rosters.sawRosterLink(rosterLink);
      if (signed) await this.items.logs.saw(signed.itemLink, signed.newSet);
      progress({ phase: "upload", done: 1, total: 1 });
      const own = newKeys.find((k) => k.userId === this.core.account.userId)!;
      this.core.vaultKeys.set(vault.vaultId, { keyVersion: vault.keyVersion + 1, wrap: own.encryptedVaultKey, key: newKey });
      return {
        keyVersion: vault.keyVersion + 1,
        items: items.length,
        members: newKeys.length,
        attempts: attempt,
        history: history.length,
        trash: trash.length,
      };
    }
  }

  /**
   * Every item opened under the old key and sealed under the new one, each with the revision it
   * was read at: an item changed since is refused (409) rather than overwritten with this older
   * copy, and the rekey starts again from a fresh read.
   */
  private async resealItems(
    vaultId: string,
    oldKey: Bytes,
    newKey: Bytes,
    stored: readonly StoredItem[],
    progress: (p: RekeyProgress) => void,
  ): Promise<RekeyedItem[]> {
    const items: RekeyedItem[] = [];
    progress({ phase: "items", done: 0, total: stored.length });
    for (const item of stored) {
      items.push({ ...(await sealItem(newKey, vaultId, item.itemId, await openItem(oldKey, vaultId, item))), revision: item.revision });
      progress({ phase: "items", done: items.length, total: stored.length });
    }
    return items;
  }

  /** The new key wrapped for each recipient (checked against the keys the roster recorded before anything trusts or pins them) and signed. */
  private async wrapFor(
    keys: AccountKeys,
    vault: Vault,
    planned: RekeyPlan,
    newKey: Bytes,
    progress: (p: RekeyProgress) => void,
  ): Promise<NewKey[]> {
    const newKeys: NewKey[] = [];
    progress({ phase: "wraps", done: 0, total: planned.recipients.length });
    for (const userId of planned.recipients) {
      let wrapped: Bytes;
      if (vault.vaultType === "personal") wrapped = await aesKwWrap(keys.stretchedKey, newKey);
      else {
        const holder = await this.trust.keysOf(userId, planned.recordedKey(userId));
        wrapped = await rsaOaepWrap(fromBase64(holder.publicKey), newKey);
      }
      newKeys.push({
        userId,
        encryptedVaultKey: toBase64(wrapped),
        wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
      });
      progress({ phase: "wraps", done: newKeys.length, total: planned.recipients.length });
    }
    return newKeys;
  }

  /**
   * The item log's rekey link, where the vault has a log: the new item set (each at its revision
   * plus one), on the log's head, signed against the roster as the rekey's own roster link leaves it.
   */
  private async signItemRekey(
    vault: Vault,
    log: FollowedLog | null | undefined,
    items: readonly RekeyedItem[],
    rosterLink: RosterLink | undefined,
    roster: VerifiedRoster | null,
  ): Promise<{ itemLink: ItemLink; newSet: Map<string, ItemState> } | undefined> {
    const newSet = await itemStatesOf(items.map((i) => ({ ...i, revision: i.revision + 1 })));
    if (!log) return undefined;
    const itemLink = await this.items.logs.sign(
      log.head,
      { op: "rekey", keyVersion: vault.keyVersion + 1, count: newSet.size, setDigest: await itemSetDigest(newSet) },
      rosterLink ? { seq: rosterLink.seq, head: await linkHash(rosterLink) } : roster!.state,
    );
    return { itemLink, newSet };
  }

  /** The rekey in one call; false when the vault changed meanwhile and `mayRetry`: the caller reads again. */
  private async send(
    vault: Vault,
    body: {
      newKeys: NewKey[];
      items: RekeyedItem[];
      history: SealedItem[];
      trash: SealedItem[];
      rosterLink: RosterLink | undefined;
      itemLink: ItemLink | undefined;
    },
    mayRetry: boolean,
    progress: (p: RekeyProgress) => void,
  ): Promise<boolean> {
    const { itemLink, ...sets } = body;
    progress({ phase: "upload", done: 0, total: 1 });
    const sent = {
      ...sets,
      keyVersion: vault.keyVersion,
      ...(itemLink && { itemLink }),
      ...(vault.vaultType === "personal" && { accountVersion: await this.core.accountVersion() }),
    };
    const started = Date.now();
    for (;;) {
      try {
        await this.core.http.request("POST", `/vaults/${encodeURIComponent(vault.vaultId)}/rekey`, { body: sent });
        return true;
      } catch (err) {
        const raced = err instanceof ApiError && (err.status === 409 || (err.status === 400 && REKEY_SETS.includes(err.field ?? "")));
        if ((raced || rosterRaced(err)) && mayRetry) return false;
        // The server had no slot for it (429: this user's or organization's share; 503: the process's), or cut its
        // body to give the slot to another organization (408): nothing was applied. The same body again, after
        // the wait the server asks for; a vault that changed meanwhile answers 409, and the rekey reads again.
        if (!(err instanceof ApiError && BUSY.includes(err.status)) || Date.now() - started > REKEY_BUSY_FOR_MS) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(err.retryAfter ?? 1, 10) * 1000));
      }
    }
  }

  /**
   * The vault's kept revisions and trash, opened under the old key and sealed under the new one.
   * An entry that does not open (not this item's under this key: the server's doing) is left out,
   * and so dropped by the server, with the history of a trashed item left out.
   */
  private async resealPast(vaultId: string, oldKey: Bytes, newKey: Bytes) {
    const [oldHistory, oldTrash] = await Promise.all([this.history.storedHistory(vaultId), this.history.storedTrash(vaultId)]);
    const reseal = async (entry: SealedItem) => {
      try {
        return await sealItem(newKey, vaultId, entry.itemId, await openItem(oldKey, vaultId, entry));
      } catch (err) {
        if (err instanceof SecurityError && err.code === "TAMPERED") return undefined;
        throw err;
      }
    };
    const trash: SealedItem[] = [];
    for (const t of oldTrash) {
      const sealed = await reseal(t);
      if (sealed) trash.push(sealed);
    }
    const trashed = new Set(oldTrash.map((t) => t.itemId));
    const kept = new Set(trash.map((t) => t.itemId));
    const history: Array<SealedItem & { revision: number }> = [];
    for (const r of oldHistory) {
      if (trashed.has(r.itemId) && !kept.has(r.itemId)) continue;
      const sealed = await reseal(r);
      if (sealed) history.push({ ...sealed, revision: r.revision });
    }
    return { history, trash };
  }
}

/** The rekey's sets whose refusal (400 naming one) means the vault changed since it was read: read again and retry. */
const REKEY_SETS = ["newKeys", "items", "history", "trash"];

/** Where the server's member list differs from the members, and their roles, an owner confirmed. */
function memberSetProblems(listed: readonly MemberEntry[], confirmed: ReadonlyMap<string, VaultRole>): SecurityError[] {
  const problems: SecurityError[] = [];
  const ids = new Set(listed.map((m) => m.userId));
  if (ids.size !== listed.length)
    problems.push(new SecurityError("MEMBER_LIST_MISMATCH", "the server's member list names a user more than once"));
  for (const m of listed) {
    const role = confirmed.get(m.userId);
    if (role === undefined)
      problems.push(
        new SecurityError(
          "MEMBER_LIST_MISMATCH",
          `the server lists ${m.userId} as a ${m.role} of the vault, whom you did not confirm: remove them first if they should not be in it`,
          m.userId,
        ),
      );
    else if (role !== m.role)
      problems.push(
        new SecurityError(
          "MEMBER_LIST_MISMATCH",
          `the server lists ${m.userId} as a ${m.role} of the vault, whom you confirmed as ${role}`,
          m.userId,
        ),
      );
  }
  for (const id of confirmed.keys())
    if (!ids.has(id))
      problems.push(new SecurityError("MEMBER_LIST_MISMATCH", `${id}, whom you confirmed, is not in the server's member list`, id));
  return problems;
}
