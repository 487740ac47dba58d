/**
 * Vaults: listing (each name checked against the vault's verified roster), creating (always
 * signed: a new random key wrapped here and a `create` link naming the vault), renaming (with a
 * signed `rename` link), deleting, and opening a vault's key, checked against the sender's key and
 * the vault's verified roster before it is used. Every write goes through `withCurrentKey`, which
 * refuses a vault whose roster says a rekey is due, one without a roster, and one whose name the
 * server misstates. A listing is held against the vaults this device knows (known-vaults.ts): one
 * left out, or a known name on another vault, is refused until the person confirms it (`forget`).
 */
import { fromBase64, toBase64, type Bytes } from "../../protocol/encoding";
import { ApiError, SecurityError } from "../errors";
import { keyFingerprint } from "../../protocol/crypto/keys";
import {
  AES_KEY_BYTES,
  aesKwUnwrap,
  aesKwWrap,
  ed25519Sign,
  ed25519Verify,
  randomBytes,
  rsaModulusBytes,
  rsaOaepUnwrap,
  rsaOaepWrap,
} from "../../protocol/crypto/primitives";
import { isCanonicalId, vaultIdFor } from "../../protocol/ids";
import { mayDo } from "../../protocol/vault-roles";
import { GENESIS_PREV, rosterWraps } from "../../protocol/formats/roster";
import { vaultMoved, type ClientCore } from "./core";
import { wrapProblem, type Rosters } from "./roster";
import type { OrgLogs } from "./org-log";
import type { Trust } from "./trust";
import type { Vault, VerifiedRoster } from "./types";
import { knownAfter, knownChanges, sameKnown, type ListedVault, type MissingVault, type MovedName } from "./known-vaults";
import type { KnownVault } from "../pins";
import type { WrapLabels } from "./wrap-labels";

/** A personal vault's key, AES-256-KW of 32 bytes: exactly 40 bytes. */
const PERSONAL_WRAP_BYTES = 40;

/** How far a vault's name is vouched for. */
export type NameCheck =
  /** Its verified roster names it so. */
  | { status: "verified"; name: string }
  /** Nothing vouches for the server's name: a vault without a roster, or whose links name none yet. */
  | { status: "unverified"; name: string; why: string }
  /** The verified roster names it otherwise than the server: `name` is the roster's, `shown` the server's. */
  | { status: "mismatch"; name: string; shown: string };

export interface CheckedVault extends Vault {
  nameCheck: NameCheck;
  /** Who signed the roster link that gives the vault's name (absent where nothing vouches for it). */
  namedBy?: string;
  /** Who started the vault's signed roster: its creator, or the owner who adopted it. */
  createdBy?: string;
  /** The owners its verified roster names. */
  owners?: string[];
  /** Why the vault's roster could not be verified (a changed key, a rollback, a forged link): opening it fails with this. */
  problem?: SecurityError;
}

/**
 * A listing this device does not take as complete: a vault it knew is left out
 * (`KNOWN_VAULT_MISSING`), or a name it knows for such a vault is now on another one
 * (`NAME_MOVED`). `listed` is the listing, each vault checked; `forget` the missing ones once
 * the person confirms they are gone.
 */
export class VaultListChanged extends SecurityError {
  constructor(
    code: "KNOWN_VAULT_MISSING" | "NAME_MOVED",
    message: string,
    readonly missing: MissingVault[],
    readonly moved: MovedName[],
    readonly listed: CheckedVault[],
  ) {
    super(code, message);
  }
}

export class Vaults {
  /** Vaults this client forgot (deleted, left, confirmed gone) during this session: a listing read before is not written back over it. */
  private readonly forgotten = new Set<string>();

  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
    private readonly orgLogs: OrgLogs,
    private readonly labels: WrapLabels,
  ) {}

  /** The vaults as the server lists them, names unchecked (`listCheckedVaults` is what to show a person); each id once, in its one form. */
  async listVaults(): Promise<Vault[]> {
    const { vaults } = await this.core.http.request<{ vaults: Vault[] }>("GET", "/vaults");
    const ids = new Set<string>();
    for (const v of Array.isArray(vaults) ? vaults : [null]) {
      if (!isCanonicalId(v?.vaultId) || ids.has(v.vaultId))
        throw new SecurityError(
          "INCONSISTENT",
          `the server's list of your vaults names a vault id twice, or in another form (${String(v?.vaultId)})`,
        );
      ids.add(v.vaultId);
    }
    return vaults;
  }

  /**
   * The caller's vaults, each name checked against the vault's verified roster. A vault whose
   * roster cannot be verified (a rollback, a forged link, a changed key) stays in the list, its
   * name unverified, with the error as its `problem`; opening it fails with that error.
   */
  async listCheckedVaults(): Promise<CheckedVault[]> {
    const vaults = await this.listVaults();
    const checked = await Promise.all(
      vaults.map(async (vault): Promise<CheckedVault> => {
        try {
          return checkedVault(vault, await this.rosters.verifiedRoster(vault.vaultId));
        } catch (err) {
          if (!(err instanceof SecurityError)) throw err;
          return { ...vault, nameCheck: { status: "unverified" as const, name: vault.vaultName, why: err.message }, problem: err };
        }
      }),
    );
    await this.holdAgainstKnown(checked);
    return checked;
  }

  /**
   * The listing against the vaults this device knows for the account: one left out is
   * `KNOWN_VAULT_MISSING`, its name on another listed vault `NAME_MOVED` (both a `VaultListChanged`
   * carrying the listing), until the person confirms with `forget`. A listing that passes is what
   * the device knows from then on.
   */
  private async holdAgainstKnown(checked: CheckedVault[]): Promise<void> {
    const me = this.core.account.userId;
    const known = (await this.core.knownVaults.get(me)) ?? {};
    const listed = checked.map(listedOf);
    const { missing, moved } = knownChanges(me, known, listed);
    if (moved.length > 0) {
      const m = moved[0]!;
      throw new VaultListChanged(
        "NAME_MOVED",
        `this device knows "${m.name}" as vault ${m.knownId}, which the server no longer lists; it now gives the name to vault ${m.nowId}${m.namedBy ? ` (named by ${m.namedBy})` : ""}${m.takenFromYours ? ", though the vault you made under that name is the one you know" : ""}: confirm the vault you knew is gone before the name is taken for the other one`,
        missing,
        moved,
        checked,
      );
    }
    if (missing.length > 0)
      throw new VaultListChanged(
        "KNOWN_VAULT_MISSING",
        `the server no longer lists ${missing.map((m) => (m.name ? `"${m.name}" (${m.vaultId})` : m.vaultId)).join(", ")}, which this device knew: deleted, or you were removed, or the server hides it; confirm it is gone to take the listing`,
        missing,
        moved,
        checked,
      );
    await this.remember((now) => knownAfter(now, listed, this.forgotten));
  }

  /** Changes what this device knows for the account, written only when it changed. */
  private async remember(change: (known: Record<string, KnownVault>) => Record<string, KnownVault>): Promise<void> {
    const me = this.core.account.userId;
    const known = (await this.core.knownVaults.get(me)) ?? {};
    const next = change(known);
    if (!sameKnown(known, next)) await this.core.knownVaults.set(me, next);
  }

  /**
   * The person confirms that these vaults are gone (deleted, left, removed from): this device
   * stops expecting them in listings, and their names are free for other vaults. Also what this
   * client does itself after its own delete or leave.
   */
  async forgetVaults(vaultIds: readonly string[]): Promise<void> {
    for (const id of vaultIds) this.forgotten.add(id);
    await this.remember((known) => Object.fromEntries(Object.entries(known).filter(([id]) => !vaultIds.includes(id))));
  }

  /** A vault as the server shows it to the caller: the one asked for (another vault's record, under any id form, is refused). */
  async getVault(id: string): Promise<Vault> {
    const vault = await this.core.http.request<Vault>("GET", `/vaults/${encodeURIComponent(id)}`);
    if (vault?.vaultId !== id)
      throw new SecurityError("INCONSISTENT", `asked for vault ${id}, the server answered vault ${String(vault?.vaultId)}`);
    return vault;
  }

  /** One vault with its name checked against its verified roster. */
  async getCheckedVault(vaultId: string): Promise<CheckedVault> {
    const vault = await this.getVault(vaultId);
    const checked = checkedVault(vault, await this.rosters.verifiedRoster(vaultId));
    if (checked.problem) throw checked.problem;
    return checked;
  }

  /**
   * A new vault: a random 256-bit key, wrapped for the creator and signed, and a roster started
   * with a `create` link that names the vault; the vault takes the id named in the link.
   */
  async createVault(name: string, type: "personal" | "shared" = "shared"): Promise<Vault> {
    const { core } = this;
    const keys = core.requireKeys();
    const vaultKey = randomBytes(AES_KEY_BYTES);
    // A personal wrap names the account state it is made under, and none is made under an older one than this device verified.
    const label = type === "personal" ? await this.labels.current() : undefined;
    const wrapped = type === "personal" ? await aesKwWrap(keys.stretchedKey, vaultKey) : await rsaOaepWrap(keys.publicKeyDer, vaultKey);
    const encryptedVaultKey = toBase64(wrapped);
    const me = core.account.userId;
    const rosterLink = await this.rosters.signRosterLink(
      {
        vaultId: await vaultIdFor(me, encryptedVaultKey),
        seq: 0,
        prev: GENESIS_PREV,
        op: "create",
        actorId: me,
        at: new Date().toISOString(),
        keyVersion: 1,
        vaultType: type,
        name,
        subjectId: me,
        role: "owner",
        subjectKey: await keyFingerprint(await this.trust.keysOf(me)),
        wraps: await rosterWraps([{ userId: me, encryptedVaultKey }], label),
      },
      null,
    );
    const vault = await core.http.request<Vault>("POST", "/vaults", {
      body: {
        name,
        type,
        encryptedVaultKey,
        wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
        rosterLink,
        // A personal wrap is under the stretched key of this account version: refused (409) if the password changed since.
        ...(type === "personal" && { accountVersion: await core.accountVersion() }),
      },
    });
    if (vault.vaultId !== rosterLink.vaultId)
      throw new SecurityError("INCONSISTENT", `the server created vault ${vault.vaultId}, not the signed ${rosterLink.vaultId}`);
    await this.rosters.sawRosterLink(rosterLink);
    core.vaultKeys.set(vault.vaultId, { keyVersion: vault.keyVersion, wrap: encryptedVaultKey, key: vaultKey });
    await this.remember((known) => ({ ...known, [vault.vaultId]: { name, namedBy: me, createdBy: me, vaultType: type } }));
    return vault;
  }

  /**
   * Renames a vault with a signed `rename` link. A vault without a roster is not renamed
   * (`UNSIGNED_VAULT`): its name would stay the server's word; its owner adopts it, naming it.
   */
  renameVault(vaultId: string, name: string): Promise<Vault> {
    return this.rosters.withRosterRetry(async () => {
      const roster = await this.rosters.verifiedRoster(vaultId);
      if (!roster)
        throw new SecurityError(
          "UNSIGNED_VAULT",
          `vault ${vaultId} has no signed roster, so its name would stay the server's word: its owner adopts it (and names it) first`,
        );
      const rosterLink = await this.rosters.nextRosterLink(roster.state, {
        op: "rename",
        keyVersion: roster.state.keyVersion,
        name,
        wraps: [],
      });
      const vault = await this.core.http.request<Vault>("PATCH", `/vaults/${encodeURIComponent(vaultId)}`, { body: { name, rosterLink } });
      await this.rosters.sawRosterLink(rosterLink);
      return vault;
    });
  }

  async deleteVault(vaultId: string): Promise<void> {
    await this.core.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}`);
    this.core.vaultKeys.delete(vaultId);
    // This device saw its own delete succeed: the vault is not expected in listings any more.
    await this.forgetVaults([vaultId]);
  }

  /**
   * The vault key from the caller's wrap: on a signed vault the wrap must be the one the verified
   * roster vouches for (`roster`, or fetched and verified here); it must be the size a wrap for
   * the caller's key has, and carry the sender's Ed25519 signature over exactly its bytes. The
   * server (or anyone between) could otherwise hand the caller a key of its own choosing.
   */
  async openVault(vault: Vault, roster?: VerifiedRoster | null): Promise<Bytes> {
    const { core } = this;
    const keys = core.requireKeys();
    // The roster first, every time: a key opened before is used again only for the very wrap, at
    // the very key version, that the verified roster vouches for now.
    const verified = roster === undefined ? await this.rosters.verifiedRoster(vault.vaultId) : roster;
    await this.checkOwnWrapAgainstRoster(vault, verified);
    const cached = core.vaultKeys.get(vault.vaultId);
    if (cached && cached.keyVersion === vault.keyVersion && cached.wrap === vault.encryptedVaultKey) return cached.key;
    const wrapped = fromBase64(vault.encryptedVaultKey);
    const personal = vault.vaultType === "personal";
    if (personal && vault.senderId !== core.account.userId) {
      throw new SecurityError("INCONSISTENT", `personal vault ${vault.vaultId} claims to be wrapped by another user`, vault.senderId);
    }
    // A wrap is exactly as long as the caller's RSA modulus (or 40 bytes); anything else the
    // sender signed (their RSA key's SPKI DER) is refused here, or by the roster's wrap hash, or by OAEP.
    const size = personal ? PERSONAL_WRAP_BYTES : await rsaModulusBytes(keys.publicKeyDer);
    if (wrapped.length !== size)
      throw new SecurityError(
        "TAMPERED",
        `the key of vault "${vault.vaultName}" is ${wrapped.length} bytes, not a ${size}-byte wrap for your key`,
      );
    const sender = (await this.trust.keysOf(vault.senderId)).signingPublicKey;
    if (
      !(await ed25519Verify(fromBase64(sender), wrapped, fromBase64(vault.wrapSignature))) &&
      !(verified && (await this.signedBeforeRotation(vault.senderId, sender, wrapped, vault.wrapSignature)))
    ) {
      throw new SecurityError(
        "BAD_SIGNATURE",
        `the key of vault "${vault.vaultName}" is not signed by its sender ${vault.senderId}: refusing it`,
        vault.senderId,
      );
    }
    let key: Bytes;
    try {
      key = personal ? await aesKwUnwrap(keys.stretchedKey, wrapped) : await rsaOaepUnwrap(keys.rsaPrivateKey, wrapped);
    } catch {
      throw new SecurityError("TAMPERED", `the key of vault "${vault.vaultName}" does not unwrap with your keys`);
    }
    if (key.length !== AES_KEY_BYTES) throw new SecurityError("TAMPERED", `the key of vault "${vault.vaultName}" is not a 256-bit key`);
    core.vaultKeys.set(vault.vaultId, { keyVersion: vault.keyVersion, wrap: vault.encryptedVaultKey, key });
    return key;
  }

  /**
   * A wrap its sender signed with keys they have since rotated away from, in a vault they left (so
   * their rotation did not sign it again): taken on a signed vault only, whose verified roster
   * vouches for the wrap itself, when a key of the sender's verified log signed it.
   */
  private async signedBeforeRotation(senderId: string, currentKey: string, wrapped: Bytes, signature: string): Promise<boolean> {
    const log = await this.trust.verifiedKeyLog(senderId);
    // The log vouches for earlier keys only as far as it ends with the sender's current (checked) keys.
    if (log[log.length - 1]!.entry.signingPublicKey !== currentKey) return false;
    for (const e of log.slice(0, -1))
      if (await ed25519Verify(fromBase64(e.entry.signingPublicKey), wrapped, fromBase64(signature))) return true;
    return false;
  }

  /**
   * A signed vault's view, checked against its verified roster: the caller is a member with the
   * role shown, at the key version shown, holding the very wrap the roster vouches for (a wrap
   * moved in from another vault, or an old one, is refused), made by the member it names; and
   * the vault is of the type the roster started it as.
   */
  private async checkOwnWrapAgainstRoster(vault: Vault, roster: VerifiedRoster | null): Promise<void> {
    if (!roster) return;
    if (roster.state.vaultType !== vault.vaultType)
      throw new SecurityError(
        "WRAP_MISMATCH",
        `vault "${vault.vaultName}" is ${vault.vaultType} for the server, ${roster.state.vaultType} for its signed roster`,
      );
    if (roster.state.keyVersion !== vault.keyVersion) {
      // A rekey between reading the vault and its roster, or the server's word against the roster: read the vault again to tell.
      if ((await this.getVault(vault.vaultId)).keyVersion !== vault.keyVersion) throw vaultMoved();
      throw new SecurityError(
        "WRAP_MISMATCH",
        `vault "${vault.vaultName}" is at key version ${vault.keyVersion} for the server, ${roster.state.keyVersion} for its signed roster`,
      );
    }
    const me = this.core.account.userId;
    const problem = await wrapProblem(roster.state, me, vault);
    if (problem) throw problem;
    if (roster.state.vaultType === "personal") await this.labels.check(vault.vaultName, roster.state.wraps.get(me)!);
  }

  /** The key of the vault as it is now (read again if a rekey lands between reading the vault and its roster). */
  async openCurrentVault(vaultId: string): Promise<Bytes> {
    return (await this.openCurrent(vaultId)).key;
  }

  /** The vault as the server states it now, its verified roster, and its key opened (again, twice at most, when the vault changed meanwhile: 409). */
  async openCurrent(vaultId: string): Promise<{ vault: Vault; key: Bytes; roster: VerifiedRoster | null }> {
    for (let attempt = 1; ; attempt++) {
      try {
        const vault = await this.getVault(vaultId);
        const roster = await this.rosters.verifiedRoster(vault.vaultId);
        return { vault, key: await this.openVault(vault, roster), roster };
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409 && attempt < 3)) throw err;
      }
    }
  }

  /**
   * Runs a write under the vault's current key, sending its `keyVersion` so the server refuses a
   * write racing a rekey (409); then once more under the new key. A 409 with the key unchanged is
   * another conflict (a stale revision, an existing member) and goes to the caller.
   *
   * Before any key is used, the vault's roster is fetched and verified, and the write refused on a
   * vault without one (`UNSIGNED_VAULT`: an owner adopts it first), on one whose roster says a
   * rekey is due (`REKEY_REQUIRED`: a removed member still holds this key), and on one whose name
   * the server states otherwise than the roster (`NAME_MISMATCH`).
   */
  async withCurrentKey<T>(vaultId: string, write: (vaultKey: Bytes, keyVersion: number, roster: VerifiedRoster) => Promise<T>): Promise<T> {
    let keyVersion = 0;
    const attempt = async (): Promise<T> => {
      const { vault, roster } = await this.writable(vaultId);
      keyVersion = vault.keyVersion;
      return write(await this.openVault(vault, roster), vault.keyVersion, roster);
    };
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      if ((await this.getVault(vaultId)).keyVersion === keyVersion) throw err;
      return attempt();
    }
  }

  /** Members the vault's verified roster still names whom the organization's signed log took out (none while the organization has no log). */
  async takenOutButNamed(roster: VerifiedRoster): Promise<string[]> {
    const org = await this.orgLogs.verified();
    return org ? [...roster.state.members.keys()].filter((userId) => org.removed.has(userId)) : [];
  }

  /** The vault and its verified roster, if writing to it is safe (see `withCurrentKey`). */
  private async writable(vaultId: string): Promise<{ vault: Vault; roster: VerifiedRoster }> {
    for (let read = 1; ; read++) {
      const vault = await this.getVault(vaultId);
      const roster = await this.rosters.verifiedRoster(vaultId);
      if (!roster)
        throw new SecurityError(
          "UNSIGNED_VAULT",
          `vault "${vault.vaultName}" has no signed roster, so its member list is the server's word: ${mayDo(vault.role, "adoptRoster") ? "adopt it (a rekey for the members you confirm)" : "ask an owner to adopt it"} before writing to it or sharing it`,
        );
      if (roster.state.rekeyRequired)
        throw new SecurityError(
          "REKEY_REQUIRED",
          `a member was removed from vault "${vault.vaultName}" and still holds its key: rekey it before writing to it or sharing it`,
        );
      const gone = await this.takenOutButNamed(roster);
      if (gone.length > 0)
        throw new SecurityError(
          "REKEY_REQUIRED",
          `vault "${vault.vaultName}" still names ${gone.join(", ")}, whom the organization's signed log took out: they hold its key; remove them from it and rekey it before writing to it or sharing it`,
        );
      // The key version the server shows is the roster's: an older one would mean an older key, which a removed member may hold.
      if (roster.state.keyVersion !== vault.keyVersion) {
        if (read < 3) continue;
        throw new SecurityError(
          "WRAP_MISMATCH",
          `vault "${vault.vaultName}" is at key version ${vault.keyVersion} for the server, ${roster.state.keyVersion} for its signed roster`,
        );
      }
      const check = nameCheckOf(vault, roster);
      if (check.status !== "mismatch") return { vault, roster };
      // A rename between the two reads shows as a newer head: read again before calling it a lie.
      if (read >= 3 || (await this.rosters.verifiedRoster(vaultId))?.state.head === roster.state.head)
        throw new SecurityError(
          "NAME_MISMATCH",
          `the server calls vault ${vaultId} "${check.shown}", but its signed roster names it "${check.name}": refusing to write to it`,
        );
    }
  }
}

/**
 * A vault with its name checked against its verified roster, who signed that name, who started the
 * roster and who owns it; a type other than the one the roster started it as is its `problem`
 * (`WRAP_MISMATCH`: a vault's type says how its key is wrapped).
 */
export function checkedVault(vault: Vault, roster: VerifiedRoster | null): CheckedVault {
  const nameCheck = nameCheckOf(vault, roster);
  if (!roster) return { ...vault, nameCheck };
  const naming = roster.links.findLast((l) => l.name !== undefined);
  const checked: CheckedVault = {
    ...vault,
    nameCheck,
    ...(nameCheck.status !== "unverified" && naming && { namedBy: naming.actorId }),
    createdBy: roster.links[0]!.actorId,
    owners: [...roster.state.members].filter(([, m]) => m.role === "owner").map(([userId]) => userId),
  };
  if (roster.state.vaultType !== vault.vaultType)
    return {
      ...checked,
      nameCheck: { status: "unverified", name: nameCheck.name, why: "the server states another type than its signed roster" },
      problem: new SecurityError(
        "WRAP_MISMATCH",
        `vault "${nameCheck.name}" is ${vault.vaultType} for the server, ${roster.state.vaultType} for its signed roster`,
      ),
    };
  return checked;
}

/** A checked vault as the known-vault check reads it: the name only where the verified roster gives it. */
function listedOf(v: CheckedVault): ListedVault {
  return {
    vaultId: v.vaultId,
    ...(v.nameCheck.status === "verified" && !v.problem && { name: v.nameCheck.name, namedBy: v.namedBy }),
    ...(v.createdBy && !v.problem && { createdBy: v.createdBy, vaultType: v.vaultType }),
  };
}

/** A vault's name against its verified roster (null: the vault has none). */
export function nameCheckOf(vault: Vault, roster: VerifiedRoster | null): NameCheck {
  if (!roster) return { status: "unverified", name: vault.vaultName, why: "the vault has no signed roster" };
  const vouched = roster.state.name;
  if (vouched === undefined)
    return {
      status: "unverified",
      name: vault.vaultName,
      why: "its signed roster names no name yet (an owner or admin confirms it by renaming)",
    };
  if (vouched !== vault.vaultName) return { status: "mismatch", name: vouched, shown: vault.vaultName };
  return { status: "verified", name: vouched };
}
