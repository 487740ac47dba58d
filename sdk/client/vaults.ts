/**
 * Vaults: listing, creating (always with a new random key, wrapped and signed here), renaming,
 * deleting, and opening a vault's key, checked against the sender's pinned key and the vault's
 * verified roster before it is used.
 */
import { fromBase64, toBase64, type Bytes } from "../encoding";
import { ApiError, SecurityError } from "../errors";
import { keyFingerprint } from "../keys";
import { AES_KEY_BYTES, aesKwUnwrap, aesKwWrap, ed25519Sign, ed25519Verify, randomBytes, rsaOaepUnwrap, rsaOaepWrap } from "../primitives";
import { GENESIS_PREV, linkHash, rosterWraps } from "../roster";
import { vaultMoved, type ClientCore } from "./core";
import { wrapProblem, type Rosters } from "./roster";
import type { Trust } from "./trust";
import type { Vault } from "./types";

export class Vaults {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
  ) {}

  async listVaults(): Promise<Vault[]> {
    return (await this.core.http.request<{ vaults: Vault[] }>("GET", "/vaults")).vaults;
  }

  getVault(vaultId: string): Promise<Vault> {
    return this.core.http.request("GET", `/vaults/${encodeURIComponent(vaultId)}`);
  }

  /**
   * A new vault: a random 256-bit key, wrapped for the creator and signed. Signed (the default,
   * `signVaults`), it starts a roster with a `create` link and takes the id named in it.
   */
  async createVault(name: string, type: "personal" | "shared" = "shared", opts: { signed?: boolean } = {}): Promise<Vault> {
    const { core } = this;
    const keys = core.requireKeys();
    const vaultKey = randomBytes(AES_KEY_BYTES);
    const wrapped = type === "personal" ? await aesKwWrap(keys.stretchedKey, vaultKey) : await rsaOaepWrap(keys.publicKeyDer, vaultKey);
    const encryptedVaultKey = toBase64(wrapped);
    const me = core.account.userId;
    const rosterLink =
      (opts.signed ?? core.signVaults)
        ? await this.rosters.signRosterLink({
            vaultId: globalThis.crypto.randomUUID(),
            seq: 0,
            prev: GENESIS_PREV,
            op: "create",
            actorId: me,
            at: new Date().toISOString(),
            keyVersion: 1,
            vaultType: type,
            subjectId: me,
            role: "owner",
            subjectKey: await keyFingerprint(await this.trust.keysOf(me)),
            wraps: await rosterWraps([{ userId: me, encryptedVaultKey }]),
          })
        : undefined;
    const vault = await core.http.request<Vault>("POST", "/vaults", {
      body: { name, type, encryptedVaultKey, wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)), rosterLink },
    });
    if (rosterLink) {
      if (vault.vaultId !== rosterLink.vaultId)
        throw new SecurityError("INCONSISTENT", `the server created vault ${vault.vaultId}, not the signed ${rosterLink.vaultId}`);
      await core.rosterHeads.set(vault.vaultId, { seq: 0, hash: await linkHash(rosterLink) });
    }
    core.vaultKeys.set(vault.vaultId, { keyVersion: vault.keyVersion, key: vaultKey });
    return vault;
  }

  renameVault(vaultId: string, name: string): Promise<Vault> {
    return this.core.http.request("PATCH", `/vaults/${encodeURIComponent(vaultId)}`, { body: { name } });
  }

  async deleteVault(vaultId: string): Promise<void> {
    await this.core.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}`);
    this.core.vaultKeys.delete(vaultId);
  }

  /**
   * The vault key from the caller's wrap, after checking the wrap's Ed25519 signature against the
   * sender's pinned signing key. A wrap that does not verify is refused: the server (or anyone
   * between) could otherwise hand the caller a key of its own choosing.
   */
  async openVault(vault: Vault): Promise<Bytes> {
    const { core } = this;
    const cached = core.vaultKeys.get(vault.vaultId);
    if (cached && cached.keyVersion === vault.keyVersion) return cached.key;
    const keys = core.requireKeys();
    await this.checkOwnWrapAgainstRoster(vault);
    const wrapped = fromBase64(vault.encryptedVaultKey);
    const personal = vault.vaultType === "personal";
    if (personal && vault.senderId !== core.account.userId) {
      throw new SecurityError("INCONSISTENT", `personal vault ${vault.vaultId} claims to be wrapped by another user`, vault.senderId);
    }
    const signingKey = fromBase64((await this.trust.keysOf(vault.senderId)).signingPublicKey);
    if (!(await ed25519Verify(signingKey, wrapped, fromBase64(vault.wrapSignature)))) {
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
    core.vaultKeys.set(vault.vaultId, { keyVersion: vault.keyVersion, key });
    return key;
  }

  /**
   * A signed vault's view, checked against its verified roster: the caller is a member with the
   * role shown, at the key version shown, holding the very wrap the roster vouches for (a wrap
   * moved in from another vault, or an old one, is refused), made by the member it names.
   */
  private async checkOwnWrapAgainstRoster(vault: Vault): Promise<void> {
    const roster = await this.rosters.verifiedRoster(vault.vaultId);
    if (!roster) return;
    if (roster.state.keyVersion !== vault.keyVersion) {
      // A rekey between reading the vault and its roster, or the server's word against the roster: read the vault again to tell.
      if ((await this.getVault(vault.vaultId)).keyVersion !== vault.keyVersion) throw vaultMoved();
      throw new SecurityError(
        "WRAP_MISMATCH",
        `vault "${vault.vaultName}" is at key version ${vault.keyVersion} for the server, ${roster.state.keyVersion} for its signed roster`,
      );
    }
    const problem = await wrapProblem(roster.state, this.core.account.userId, vault);
    if (problem) throw problem;
  }

  /** The key of the vault as it is now (read again if a rekey lands between reading the vault and its roster). */
  async openCurrentVault(vaultId: string): Promise<Bytes> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.openVault(await this.getVault(vaultId));
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409 && attempt < 3)) throw err;
      }
    }
  }

  /**
   * Runs a write under the vault's current key, sending its `keyVersion` so the server refuses a
   * write racing a rekey (409); then once more under the new key. A 409 with the key unchanged is
   * another conflict (a stale revision, an existing member) and goes to the caller.
   */
  async withCurrentKey<T>(vaultId: string, write: (vaultKey: Bytes, keyVersion: number) => Promise<T>): Promise<T> {
    const vault = await this.getVault(vaultId);
    try {
      return await write(await this.openVault(vault), vault.keyVersion);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      const now = await this.getVault(vaultId);
      if (now.keyVersion === vault.keyVersion) throw err;
      return write(await this.openVault(now), now.keyVersion);
    }
  }
}
