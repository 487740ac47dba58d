/**
 * `VaultClient`: the whole client flow over the service's HTTP interface. The server stores only
 * what this class seals, wraps and signs; everything it hands back is checked here before use.
 */
import { fromBase64, toBase64, type Bytes } from "./encoding";
import { ApiError, SecurityError, WeakPasswordError } from "./errors";
import { checkMasterPassword, emailWords } from "./password-strength";
import { Transport, type Tokens } from "./http";
import { openItem, sealItem, type ItemContent, type SealedItem } from "./items";
import {
  bundleFingerprint,
  bundleSelfSignatureVerifies,
  createAccountKeys,
  deriveAccountSecrets,
  keyFingerprint,
  newKdfParams,
  openAccountKeys,
  type AccountKeys,
  type DeriveMasterKey,
  type KdfChoice,
  type PublicKeyBundle,
  type StoredAccountKeys,
} from "./keys";
import { MemoryPinStore, MemoryRosterHeadStore, type PinStore, type RosterHeadStore } from "./pins";
import {
  GENESIS_PREV,
  linkHash,
  memberDigest,
  parseLink,
  replayRoster,
  rosterWraps,
  sha256Hex,
  signLink,
  type RosterLink,
  type RosterState,
  type UnsignedLink,
} from "./roster";
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
  type KdfParams,
} from "./primitives";

export type VaultRole = "owner" | "admin" | "member";
export type OrgRole = "owner" | "admin" | "member";

/** A vault as the server shows it to the caller (contract section 3). */
export interface Vault {
  vaultId: string;
  vaultName: string;
  vaultType: "personal" | "shared";
  encryptedVaultKey: string;
  senderId: string;
  wrapSignature: string;
  role: VaultRole;
  orgId: string;
  keyVersion: number;
  rekeyRequired: boolean;
  createdAt: string;
  updatedAt: string;
}

/** One member's wrap of the vault key, as the member list and the remove-member answer show it. */
export interface MemberEntry extends Pick<
  Vault,
  "vaultId" | "vaultName" | "vaultType" | "encryptedVaultKey" | "senderId" | "wrapSignature" | "role"
> {
  userId: string;
}

export interface StoredItem extends SealedItem {
  vaultId: string;
  revision: number;
  keyVersion?: number;
  createdAt: string;
  updatedAt: string;
}

/** An item opened: its content beside the server's bookkeeping. */
export interface Item extends ItemContent {
  itemId: string;
  vaultId: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

export interface Invite {
  id: string;
  email: string;
  role: "admin" | "member";
  inviterId: string;
  expiresAt: string;
  createdAt: string;
}

/** One record of an organization's audit log (contract section 8). */
export interface AuditRecord {
  eventId: string;
  seq: number;
  type: string;
  at: string;
  actorId: string;
  orgId: string;
  vaultId?: string;
  itemId?: string;
  targetUserId?: string;
  inviteId?: string;
  prevHash: string;
  hash: string;
}

/** Who is logged in, and their keys as the server keeps them (public, or sealed under the stretched key). */
export interface Account extends StoredAccountKeys {
  userId: string;
  orgId: string;
  role: OrgRole;
  email: string;
  kdf: KdfParams;
}

export interface RekeyProgress {
  phase: "items" | "wraps" | "upload";
  done: number;
  total: number;
}

export interface RekeyResult {
  keyVersion: number;
  items: number;
  members: number;
  attempts: number;
}

export interface WrapCheck {
  userId: string;
  email?: string;
  role: VaultRole;
  senderId: string;
  ok: boolean;
  problems: string[];
}

export interface VaultVerification {
  vaultId: string;
  vaultName: string;
  vaultType: "personal" | "shared";
  keyVersion: number;
  ok: boolean;
  /** Problems with the vault as a whole (member set, the caller's own key). */
  problems: string[];
  /** Not failures, but worth knowing (a pending rekey). */
  warnings: string[];
  members: WrapCheck[];
  /** The verified head of the vault's signed roster; null for a vault without one. */
  roster: { seq: number; head: string } | null;
}

export interface VaultClientOptions {
  baseUrl: string;
  /** A saved login, to resume without logging in again. */
  tokens?: Tokens;
  account?: Account;
  onTokens?: (tokens: Tokens | undefined) => void | Promise<void>;
  /** Where first-seen key fingerprints are kept; in memory by default. */
  pins?: PinStore;
  /** Where the highest roster head seen per vault is kept; in memory by default. */
  rosterHeads?: RosterHeadStore;
  /** Whether `createVault` makes signed vaults (a roster from a `create` link); default true. */
  signVaults?: boolean;
  /** Where the master key is derived (the slow, memory-hard step); in this thread by default. A browser passes one that runs it in a Web Worker. */
  deriveMasterKey?: DeriveMasterKey;
  fetch?: typeof fetch;
}

const MAX_REKEY_ATTEMPTS = 5;
/** How often a membership change is signed again after another change took its place in the roster. */
const MAX_ROSTER_ATTEMPTS = 5;

/** A vault's roster as this client verified it: the replayed state and the links it came from. */
export interface VerifiedRoster {
  state: RosterState;
  links: RosterLink[];
}

/** The server's refusal of a link because the chain moved on meanwhile (another change landed first). */
function rosterRaced(err: unknown): boolean {
  return (
    err instanceof ApiError && err.status === 400 && /^rosterLink\.(seq|prev|keyVersion|memberDigest|members|wraps)$/.test(err.field ?? "")
  );
}

/** The vault changed between two reads: the caller reads again. */
const vaultMoved = () => new ApiError(409, "CONFLICT", "the vault changed while it was being read: read it again");

export class VaultClient {
  readonly http: Transport;
  private accountInfo?: Account;
  private keys?: AccountKeys;
  private readonly pins: PinStore;
  private readonly rosterHeads: RosterHeadStore;
  private readonly signVaults: boolean;
  private readonly derive: DeriveMasterKey | undefined;
  /** Vault keys opened in this session, by vault and key version. */
  private readonly vaultKeys = new Map<string, { keyVersion: number; key: Bytes }>();

  constructor(opts: VaultClientOptions) {
    this.http = new Transport(opts);
    this.accountInfo = opts.account;
    this.pins = opts.pins ?? new MemoryPinStore();
    this.rosterHeads = opts.rosterHeads ?? new MemoryRosterHeadStore();
    this.signVaults = opts.signVaults ?? true;
    this.derive = opts.deriveMasterKey;
  }

  get account(): Account {
    if (!this.accountInfo) throw new ApiError(401, "UNAUTHORIZED", "not logged in");
    return this.accountInfo;
  }

  get unlocked(): boolean {
    return this.keys !== undefined;
  }

  // ---- Account -------------------------------------------------------------------------------

  /**
   * Refuses a weak master password (`checkMasterPassword`: `WeakPasswordError`), then generates the account's keys, registers them (with an invite token, or as the first user /
   * in open registration) and logs in. The password never leaves this function.
   */
  async register(opts: {
    email: string;
    password: string;
    inviteToken?: string;
    orgName?: string;
    kdf?: KdfChoice;
    rsaBits?: number;
  }): Promise<Account> {
    const verdict = await checkMasterPassword(opts.password, emailWords(opts.email));
    if (!verdict.ok) throw new WeakPasswordError(verdict.reasons, verdict.suggestions);
    const { registration, keys } = await createAccountKeys(opts.password, {
      kdf: opts.kdf && newKdfParams(opts.kdf),
      rsaBits: opts.rsaBits,
      derive: this.derive,
    });
    await this.http.request("POST", "/auth/register", {
      auth: false,
      body: { email: opts.email, ...registration, inviteToken: opts.inviteToken, orgName: opts.orgName },
    });
    return this.finishLogin(opts.email, registration.authHash, keys.stretchedKey);
  }

  /** Prelogin (for the KDF parameters), derive, log in, open the private keys. */
  async login(email: string, password: string): Promise<Account> {
    const { kdf } = await this.http.request<{ kdf: KdfParams }>("GET", "/auth/prelogin", { auth: false, query: { email } });
    const { authHash, stretchedKey } = await deriveAccountSecrets(password, kdf, this.derive);
    return this.finishLogin(email, toBase64(authHash), stretchedKey);
  }

  private async finishLogin(email: string, authHash: string, stretchedKey: Bytes): Promise<Account> {
    const res = await this.http.request<Account & Tokens>("POST", "/auth/login", { auth: false, body: { email, authHash } });
    this.accountInfo = {
      userId: res.userId,
      orgId: res.orgId,
      role: res.role,
      email: email.trim().toLowerCase(),
      kdf: res.kdf,
      publicKey: res.publicKey,
      signingPublicKey: res.signingPublicKey,
      encryptedPrivateKey: res.encryptedPrivateKey,
      encryptedSigningPrivateKey: res.encryptedSigningPrivateKey,
    };
    await this.http.setTokens({ accessToken: res.accessToken, refreshToken: res.refreshToken });
    await this.unlockWithStretchedKey(stretchedKey);
    return this.accountInfo;
  }

  /** Opens the private keys of a resumed login with the password. */
  async unlock(password: string): Promise<void> {
    const { stretchedKey } = await deriveAccountSecrets(password, this.account.kdf, this.derive);
    await this.unlockWithStretchedKey(stretchedKey);
  }

  /**
   * Opens the private keys with an already derived stretched key (a CLI session), checks they
   * match the public keys the server holds for this account, and pins them.
   */
  async unlockWithStretchedKey(stretchedKey: Bytes): Promise<void> {
    const keys = await openAccountKeys(stretchedKey, this.account);
    const own = { userId: this.account.userId, publicKey: this.account.publicKey, signingPublicKey: this.account.signingPublicKey };
    await this.checkPin(own.userId, await bundleFingerprint(own));
    this.keys = keys;
  }

  /** The stretched key of an unlocked client, for a caller that seals it into a session. */
  exportStretchedKey(): Bytes {
    return this.requireKeys().stretchedKey.slice();
  }

  lock(): void {
    this.keys = undefined;
    this.vaultKeys.clear();
  }

  async logout(): Promise<void> {
    const refreshToken = this.http.currentTokens?.refreshToken;
    try {
      if (refreshToken) await this.http.request("POST", "/auth/logout", { body: { refreshToken } });
    } finally {
      await this.http.setTokens(undefined);
      this.lock();
    }
  }

  me(): Promise<{ userId: string; email: string; orgId: string; role: OrgRole; createdAt: string }> {
    return this.http.request("GET", "/users/me");
  }

  private requireKeys(): AccountKeys {
    if (!this.keys) throw new ApiError(0, "LOCKED", "the account is locked: unlock it with the master password first");
    return this.keys;
  }

  // ---- Other users' keys ------------------------------------------------------------------------

  /**
   * A user's public keys, checked: the bundle's self-signature verifies, and its fingerprint is
   * the one pinned on first use (else `SecurityError("KEY_CHANGED")` until `trustUser`).
   */
  async userKeys(userId: string): Promise<PublicKeyBundle> {
    const bundle = await this.selfSignedBundle(userId);
    await this.checkPin(bundle.userId, await bundleFingerprint(bundle));
    return bundle;
  }

  /** The bundle the server shows for a user, refused unless it is theirs and signed by its own signing key. */
  private async selfSignedBundle(userId: string): Promise<PublicKeyBundle> {
    const bundle = await this.http.request<PublicKeyBundle>("GET", `/users/${encodeURIComponent(userId)}/keys`);
    if (bundle.userId?.toLowerCase() !== userId.toLowerCase())
      throw new SecurityError("INCONSISTENT", `asked for the keys of ${userId}, got another user's`, userId);
    if (!(await bundleSelfSignatureVerifies(bundle)))
      throw new SecurityError("BAD_SIGNATURE", `the key bundle of ${bundle.email ?? userId} is not signed by its own signing key`, userId);
    return bundle;
  }

  private async checkPin(userId: string, fingerprint: string): Promise<void> {
    const pinned = await this.pins.get(userId);
    if (pinned === undefined) await this.pins.set(userId, fingerprint);
    else if (pinned !== fingerprint) {
      throw new SecurityError(
        "KEY_CHANGED",
        `the keys of user ${userId} changed since first seen (pinned ${pinned}, now ${fingerprint}); check the new fingerprint with them, then trust it`,
        userId,
      );
    }
  }

  /** The fingerprint the server currently shows for a user, and the pinned one. */
  async fingerprint(userId: string): Promise<{ current: string; pinned?: string }> {
    const bundle = await this.selfSignedBundle(userId);
    return { current: await bundleFingerprint(bundle), pinned: await this.pins.get(bundle.userId) };
  }

  /** Accepts a user's changed keys: call only after comparing the fingerprint out of band. */
  async trustUser(userId: string, fingerprint: string): Promise<void> {
    const { current } = await this.fingerprint(userId);
    if (current !== fingerprint)
      throw new SecurityError("KEY_CHANGED", `the server now shows ${current}, not the fingerprint you checked`, userId);
    await this.pins.set(userId.toLowerCase(), current);
  }

  async orgMembers(): Promise<Array<PublicKeyBundle & { email: string; role: OrgRole; createdAt: string }>> {
    return (
      await this.http.request<{ members: Array<PublicKeyBundle & { email: string; role: OrgRole; createdAt: string }> }>(
        "GET",
        `/orgs/${this.account.orgId}/members`,
      )
    ).members;
  }

  /** A user of the caller's organization by email or id. */
  async findUser(emailOrId: string): Promise<{ userId: string; email: string; role: OrgRole }> {
    const wanted = emailOrId.trim().toLowerCase();
    const found = (await this.orgMembers()).find((m) => m.userId === wanted || m.email === wanted);
    if (!found) throw new ApiError(404, "NOT_FOUND", `no user ${emailOrId} in your organization`);
    return { userId: found.userId, email: found.email, role: found.role };
  }

  // ---- Vaults -----------------------------------------------------------------------------------

  async listVaults(): Promise<Vault[]> {
    return (await this.http.request<{ vaults: Vault[] }>("GET", "/vaults")).vaults;
  }

  getVault(vaultId: string): Promise<Vault> {
    return this.http.request("GET", `/vaults/${encodeURIComponent(vaultId)}`);
  }

  /** The member list as the server shows it, unchecked: `verifiedMembers` is what to show a person. */
  async members(vaultId: string): Promise<MemberEntry[]> {
    return (await this.http.request<{ members: MemberEntry[] }>("GET", `/vaults/${encodeURIComponent(vaultId)}/members`)).members;
  }

  /**
   * The member list checked against the vault's verified signed roster (who, which role, which
   * wrap): a list that disagrees is refused (`MEMBER_LIST_MISMATCH`, `WRAP_MISMATCH`). Without a
   * roster the list is the server's word, and `roster` is null.
   */
  async verifiedMembers(vaultId: string): Promise<{ members: MemberEntry[]; roster: VerifiedRoster | null }> {
    for (let attempt = 1; ; attempt++) {
      const roster = await this.verifiedRoster(vaultId);
      const members = await this.members(vaultId);
      const problems = roster ? await memberListProblems(roster.state, members) : [];
      if (problems.length === 0) return { members, roster };
      // A change between the two reads shows as a newer head: read both again.
      const again = await this.verifiedRoster(vaultId);
      if (!(again && again.state.head !== roster!.state.head && attempt < 3)) throw problems[0]!;
    }
  }

  /**
   * A new vault: a random 256-bit key, wrapped for the creator and signed. Signed (the default,
   * `signVaults`), it starts a roster with a `create` link and takes the id named in it.
   */
  async createVault(name: string, type: "personal" | "shared" = "shared", opts: { signed?: boolean } = {}): Promise<Vault> {
    const keys = this.requireKeys();
    const vaultKey = randomBytes(AES_KEY_BYTES);
    const wrapped = type === "personal" ? await aesKwWrap(keys.stretchedKey, vaultKey) : await rsaOaepWrap(keys.publicKeyDer, vaultKey);
    const encryptedVaultKey = toBase64(wrapped);
    const me = this.account.userId;
    const rosterLink =
      (opts.signed ?? this.signVaults)
        ? await this.signRosterLink({
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
            subjectKey: await keyFingerprint(await this.keysOf(me)),
            wraps: await rosterWraps([{ userId: me, encryptedVaultKey }]),
          })
        : undefined;
    const vault = await this.http.request<Vault>("POST", "/vaults", {
      body: { name, type, encryptedVaultKey, wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)), rosterLink },
    });
    if (rosterLink) {
      if (vault.vaultId !== rosterLink.vaultId)
        throw new SecurityError("INCONSISTENT", `the server created vault ${vault.vaultId}, not the signed ${rosterLink.vaultId}`);
      await this.rosterHeads.set(vault.vaultId, { seq: 0, hash: await linkHash(rosterLink) });
    }
    this.vaultKeys.set(vault.vaultId, { keyVersion: vault.keyVersion, key: vaultKey });
    return vault;
  }

  renameVault(vaultId: string, name: string): Promise<Vault> {
    return this.http.request("PATCH", `/vaults/${encodeURIComponent(vaultId)}`, { body: { name } });
  }

  async deleteVault(vaultId: string): Promise<void> {
    await this.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}`);
    this.vaultKeys.delete(vaultId);
  }

  /**
   * The vault key from the caller's wrap, after checking the wrap's Ed25519 signature against the
   * sender's pinned signing key. A wrap that does not verify is refused: the server (or anyone
   * between) could otherwise hand the caller a key of its own choosing.
   */
  async openVault(vault: Vault): Promise<Bytes> {
    const cached = this.vaultKeys.get(vault.vaultId);
    if (cached && cached.keyVersion === vault.keyVersion) return cached.key;
    const keys = this.requireKeys();
    await this.checkOwnWrapAgainstRoster(vault);
    const wrapped = fromBase64(vault.encryptedVaultKey);
    const personal = vault.vaultType === "personal";
    if (personal && vault.senderId !== this.account.userId) {
      throw new SecurityError("INCONSISTENT", `personal vault ${vault.vaultId} claims to be wrapped by another user`, vault.senderId);
    }
    const signingKey = fromBase64((await this.keysOf(vault.senderId)).signingPublicKey);
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
    this.vaultKeys.set(vault.vaultId, { keyVersion: vault.keyVersion, key });
    return key;
  }

  /**
   * Wraps the vault key for a user of the organization (keys checked and pinned) and adds them;
   * a rekey in between (409) wraps the new key instead.
   */
  async share(vaultId: string, userId: string, role: "admin" | "member" = "member"): Promise<void> {
    const keys = this.requireKeys();
    const recipient = await this.userKeys(userId);
    await this.withRosterRetry(() =>
      this.withCurrentKey(vaultId, async (vaultKey, keyVersion) => {
        const roster = await this.verifiedRoster(vaultId);
        if (roster && roster.state.keyVersion !== keyVersion) throw vaultMoved();
        const wrapped = await rsaOaepWrap(fromBase64(recipient.publicKey), vaultKey);
        const encryptedVaultKey = toBase64(wrapped);
        const rosterLink = roster
          ? await this.nextRosterLink(roster.state, {
              op: "add",
              keyVersion,
              subjectId: recipient.userId,
              role,
              subjectKey: await keyFingerprint(recipient),
              wraps: await rosterWraps([{ userId: recipient.userId, encryptedVaultKey }]),
            })
          : undefined;
        await this.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/members`, {
          body: {
            recipientUserId: recipient.userId,
            role,
            keyVersion,
            encryptedVaultKey,
            wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
            rosterLink,
          },
        });
        await this.sawRosterLink(rosterLink);
      }),
    );
  }

  /**
   * Removes a member (or leaves, with one's own id). When `rekeyRequired` comes back, call `rekey`.
   * On a signed vault the removal is a signed `remove` link, and the members the server says
   * remain must be the roster's.
   */
  removeMember(vaultId: string, userId: string): Promise<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }> {
    return this.withRosterRetry(async () => {
      const roster = await this.verifiedRoster(vaultId);
      const subject = roster?.state.members.get(userId);
      if (roster && !subject) throw new ApiError(404, "NOT_FOUND", `${userId} is not a member of the vault according to its signed roster`);
      const rosterLink = roster
        ? await this.nextRosterLink(roster.state, {
            op: "remove",
            keyVersion: roster.state.keyVersion,
            subjectId: userId,
            subjectKey: subject!.key,
            wraps: [],
          })
        : undefined;
      const result = await this.http.request<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }>(
        "DELETE",
        `/vaults/${encodeURIComponent(vaultId)}/members/${encodeURIComponent(userId)}`,
        { body: rosterLink ? { rosterLink } : undefined },
      );
      if (roster) {
        await this.sawRosterLink(rosterLink);
        const members = new Map(roster.state.members);
        const wraps = new Map(roster.state.wraps);
        members.delete(userId);
        wraps.delete(userId);
        const problems = await memberListProblems({ ...roster.state, members, wraps }, result.remainingMembers);
        if (problems.length > 0) throw problems[0]!;
      }
      return result;
    });
  }

  /** Changes a member's role; on a signed vault, with a signed `role` link. */
  changeRole(vaultId: string, userId: string, role: VaultRole): Promise<MemberEntry> {
    return this.withRosterRetry(async () => {
      const roster = await this.verifiedRoster(vaultId);
      const subject = roster?.state.members.get(userId);
      if (roster && !subject) throw new ApiError(404, "NOT_FOUND", `${userId} is not a member of the vault according to its signed roster`);
      const rosterLink = roster
        ? await this.nextRosterLink(roster.state, {
            op: "role",
            keyVersion: roster.state.keyVersion,
            subjectId: userId,
            role,
            subjectKey: subject!.key,
            wraps: [],
          })
        : undefined;
      const entry = await this.http.request<MemberEntry>(
        "PATCH",
        `/vaults/${encodeURIComponent(vaultId)}/members/${encodeURIComponent(userId)}`,
        { body: { role, rosterLink } },
      );
      await this.sawRosterLink(rosterLink);
      return entry;
    });
  }

  // ---- Signed roster ----------------------------------------------------------------------------

  /**
   * The vault's roster, fetched and verified: replayed from its first link, each signer's right
   * checked under the role rules, each signature checked with the signer's pinned keys, which
   * must also be the keys the chain recorded for them; and never older than, nor different from,
   * a head this client saw before (`ROSTER_ROLLBACK`). Null for a vault without a roster.
   */
  async verifiedRoster(vaultId: string): Promise<VerifiedRoster | null> {
    const { links } = await this.http.request<{ links: unknown }>("GET", `/vaults/${encodeURIComponent(vaultId)}/roster`);
    if (!Array.isArray(links)) throw new SecurityError("ROSTER_BROKEN", `the server's roster of vault ${vaultId} is not a list of links`);
    const state = await replayRoster(vaultId, links, (userId) => this.keysOf(userId));
    const seen = await this.rosterHeads.get(vaultId);
    if (seen) {
      if (!state || state.seq < seen.seq) {
        throw new SecurityError(
          "ROSTER_ROLLBACK",
          `the server shows the roster of vault ${vaultId} ${state ? `up to link ${state.seq}` : "as empty"}, but this client already saw link ${seen.seq}: a later change, such as a removal, would be undone`,
        );
      }
      if ((await linkHash(parseLink(links[seen.seq]))) !== seen.hash) {
        throw new SecurityError(
          "ROSTER_ROLLBACK",
          `the server shows the roster of vault ${vaultId} with another link ${seen.seq} than the one this client saw: a forked history`,
        );
      }
    }
    if (!state) return null;
    if (!seen || state.seq > seen.seq) await this.rosterHeads.set(vaultId, { seq: state.seq, hash: state.head });
    return { state, links: links.map((l) => parseLink(l)) };
  }

  /**
   * Makes a vault without a roster a signed one: the caller (an owner) vouches, in an `adopt`
   * link, for the members, roles, keys and wraps it has just verified.
   */
  async adoptRoster(vaultId: string): Promise<VerifiedRoster> {
    const existing = await this.verifiedRoster(vaultId);
    if (existing) return existing;
    const [vault, members] = await Promise.all([this.getVault(vaultId), this.members(vaultId)]);
    const report = await this.verifyVault(vaultId);
    if (!report.ok) {
      throw new SecurityError(
        "INCONSISTENT",
        `not vouching for the members of vault "${vault.vaultName}": ${[...report.problems, ...report.members.flatMap((m) => m.problems)].join("; ")}`,
      );
    }
    const checked = new Set(report.members.map((m) => `${m.userId}/${m.role}/${m.senderId}`));
    if (
      report.keyVersion !== vault.keyVersion ||
      members.length !== checked.size ||
      members.some((m) => !checked.has(`${m.userId}/${m.role}/${m.senderId}`))
    )
      throw vaultMoved();
    const listed = await Promise.all(
      members.map(async (m) => ({ userId: m.userId, role: m.role, key: await keyFingerprint(await this.keysOf(m.userId)) })),
    );
    const rosterLink = await this.signRosterLink({
      vaultId,
      seq: 0,
      prev: GENESIS_PREV,
      op: "adopt",
      actorId: this.account.userId,
      at: new Date().toISOString(),
      keyVersion: vault.keyVersion,
      vaultType: vault.vaultType,
      members: listed.sort((a, b) => (a.userId < b.userId ? -1 : 1)),
      wraps: await rosterWraps(members),
    });
    await this.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/roster`, { body: { rosterLink } });
    await this.sawRosterLink(rosterLink);
    return (await this.verifiedRoster(vaultId))!;
  }

  private signRosterLink(link: UnsignedLink): Promise<RosterLink> {
    return signLink(link, this.requireKeys().signingPrivateKey);
  }

  /** The caller's signed link after `state`. */
  private nextRosterLink(
    state: RosterState,
    fields: Omit<UnsignedLink, "vaultId" | "seq" | "prev" | "actorId" | "at">,
  ): Promise<RosterLink> {
    return this.signRosterLink({
      vaultId: state.vaultId,
      seq: state.seq + 1,
      prev: state.head,
      actorId: this.account.userId,
      at: new Date().toISOString(),
      ...fields,
    });
  }

  /** Remembers the head a change of ours made. */
  private async sawRosterLink(link: RosterLink | undefined): Promise<void> {
    if (link) await this.rosterHeads.set(link.vaultId, { seq: link.seq, hash: await linkHash(link) });
  }

  /** Runs a signed change again, from a fresh roster, while another change takes its place in the chain first. */
  private async withRosterRetry<T>(change: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await change();
      } catch (err) {
        if (!(rosterRaced(err) && attempt < MAX_ROSTER_ATTEMPTS)) throw err;
      }
    }
  }

  /**
   * A signed vault's view, checked against its verified roster: the caller is a member with the
   * role shown, at the key version shown, holding the very wrap the roster vouches for (a wrap
   * moved in from another vault, or an old one, is refused), made by the member it names.
   */
  private async checkOwnWrapAgainstRoster(vault: Vault): Promise<void> {
    const roster = await this.verifiedRoster(vault.vaultId);
    if (!roster) return;
    if (roster.state.keyVersion !== vault.keyVersion) {
      // A rekey between reading the vault and its roster, or the server's word against the roster: read the vault again to tell.
      if ((await this.getVault(vault.vaultId)).keyVersion !== vault.keyVersion) throw vaultMoved();
      throw new SecurityError(
        "WRAP_MISMATCH",
        `vault "${vault.vaultName}" is at key version ${vault.keyVersion} for the server, ${roster.state.keyVersion} for its signed roster`,
      );
    }
    const problem = await wrapProblem(roster.state, this.account.userId, vault);
    if (problem) throw problem;
  }

  /**
   * A new vault key: every item opened under the old key and sealed under the new one, the new
   * key wrapped for every remaining member (their keys checked and pinned) and signed, all sent
   * in one call. When the vault changed meanwhile (409, or 400 for a member or item set that no
   * longer matches), it starts again from the beginning. On a signed vault the new key goes to
   * exactly the members of the verified roster, each under the keys the roster recorded, and a
   * member list from the server that differs from the roster is refused before anything is sent.
   */
  async rekey(vaultId: string, opts: { onProgress?: (p: RekeyProgress) => void; maxAttempts?: number } = {}): Promise<RekeyResult> {
    const keys = this.requireKeys();
    const maxAttempts = opts.maxAttempts ?? MAX_REKEY_ATTEMPTS;
    const progress = opts.onProgress ?? (() => {});
    for (let attempt = 1; ; attempt++) {
      const vault = await this.getVault(vaultId);
      let oldKey: Bytes, members: MemberEntry[], roster: VerifiedRoster | null;
      try {
        oldKey = await this.openVault(vault);
        // A member list that disagrees with the signed roster is refused here, before anything is sent.
        ({ members, roster } = await this.verifiedMembers(vaultId));
        if (roster && roster.state.keyVersion !== vault.keyVersion) throw vaultMoved();
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && attempt < maxAttempts) continue;
        throw err;
      }
      const stored = await this.listStoredItems(vaultId);
      // On a signed vault, the new key goes to the roster's members only.
      const recipients = roster ? [...roster.state.members.keys()] : members.map((m) => m.userId);
      const newKey = randomBytes(AES_KEY_BYTES);

      // Each with the revision it was read at: an item changed since is refused (409) rather than
      // overwritten with this older copy, and the rekey starts again from a fresh read.
      const items: Array<SealedItem & { revision: number }> = [];
      progress({ phase: "items", done: 0, total: stored.length });
      for (const item of stored) {
        items.push({ ...(await sealItem(newKey, vaultId, item.itemId, await openItem(oldKey, vaultId, item))), revision: item.revision });
        progress({ phase: "items", done: items.length, total: stored.length });
      }

      const newKeys: Array<{ userId: string; encryptedVaultKey: string; wrapSignature: string }> = [];
      progress({ phase: "wraps", done: 0, total: recipients.length });
      for (const userId of recipients) {
        let wrapped: Bytes;
        if (vault.vaultType === "personal") wrapped = await aesKwWrap(keys.stretchedKey, newKey);
        else {
          const holder = await this.keysOf(userId);
          const recorded = roster?.state.members.get(userId)?.key;
          if (recorded && (await keyFingerprint(holder)) !== recorded) {
            throw new SecurityError(
              "KEY_CHANGED",
              `the keys the server shows for ${userId} are not the ones the vault's signed roster recorded`,
              userId,
            );
          }
          wrapped = await rsaOaepWrap(fromBase64(holder.publicKey), newKey);
        }
        newKeys.push({
          userId,
          encryptedVaultKey: toBase64(wrapped),
          wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
        });
        progress({ phase: "wraps", done: newKeys.length, total: recipients.length });
      }
      const rosterLink = roster
        ? await this.nextRosterLink(roster.state, {
            op: "rekey",
            keyVersion: vault.keyVersion + 1,
            memberDigest: await memberDigest(roster.state.members),
            wraps: await rosterWraps(newKeys),
          })
        : undefined;

      progress({ phase: "upload", done: 0, total: 1 });
      try {
        await this.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/rekey`, {
          body: { newKeys, items, keyVersion: vault.keyVersion, rosterLink },
        });
      } catch (err) {
        const raced =
          err instanceof ApiError && (err.status === 409 || (err.status === 400 && (err.field === "newKeys" || err.field === "items")));
        if ((raced || rosterRaced(err)) && attempt < maxAttempts) continue;
        throw err;
      }
      await this.sawRosterLink(rosterLink);
      progress({ phase: "upload", done: 1, total: 1 });
      this.vaultKeys.set(vaultId, { keyVersion: vault.keyVersion + 1, key: newKey });
      return { keyVersion: vault.keyVersion + 1, items: items.length, members: newKeys.length, attempts: attempt };
    }
  }

  /**
   * Checks every member's wrap as far as a member can: its signature verifies against the
   * sender's pinned key, the sender is an owner or admin of the vault, the wrap has the size
   * its recipient's key gives, the wraps are exactly one per member, and the caller's own wrap
   * opens. (Other members' wraps cannot be opened here: that is the point.)
   */
  async verifyVault(vaultId: string): Promise<VaultVerification> {
    const vault = await this.getVault(vaultId);
    const [members, org] = await Promise.all([this.members(vaultId), this.orgMembers()]);
    const emails = new Map(org.map((m) => [m.userId, m.email]));
    const roles = new Map(members.map((m) => [m.userId, m.role]));
    const problems: string[] = [];
    const warnings: string[] = [];
    const name = (id: string) => emails.get(id) ?? id;

    if (roles.size !== members.length) problems.push("the member list holds the same user more than once");
    if (!roles.has(this.account.userId)) problems.push("you are not in the member list the server returned");
    if (vault.vaultType === "personal" && members.length !== 1) problems.push("a personal vault has more than one member");
    if (![...roles.values()].includes("owner")) problems.push("the vault has no owner");
    if (vault.rekeyRequired) warnings.push("a member left and the vault has not been rekeyed: the key they held still opens its items");
    let roster: VerifiedRoster | null = null;
    try {
      roster = await this.verifiedRoster(vaultId);
      if (roster) {
        if (roster.state.keyVersion !== vault.keyVersion)
          problems.push(`the vault is at key version ${vault.keyVersion}, its signed roster at ${roster.state.keyVersion}`);
        for (const problem of await memberListProblems(roster.state, members)) problems.push(`signed roster: ${problem.message}`);
      } else {
        warnings.push("the vault has no signed roster: its member list is the server's word (an owner can adopt one)");
      }
    } catch (err) {
      problems.push(`signed roster: ${(err as Error).message}`);
    }
    try {
      await this.openVault(vault);
    } catch (err) {
      problems.push(`your own wrap does not open: ${(err as Error).message}`);
    }

    const checks: WrapCheck[] = [];
    for (const m of members) {
      const check: WrapCheck = {
        userId: m.userId,
        email: emails.get(m.userId),
        role: m.role,
        senderId: m.senderId,
        ok: true,
        problems: [],
      };
      checks.push(check);
      try {
        const wrapped = fromBase64(m.encryptedVaultKey);
        if (m.vaultId !== vault.vaultId) check.problems.push(`the wrap belongs to vault ${m.vaultId}`);
        const expectedSize =
          vault.vaultType === "personal" ? 40 : await rsaModulusBytes(fromBase64((await this.keysOf(m.userId)).publicKey));
        if (wrapped.length !== expectedSize)
          check.problems.push(`the wrap is ${wrapped.length} bytes, not the ${expectedSize} its recipient's key gives`);
        const sender = await this.keysOf(m.senderId);
        if (!(await ed25519Verify(fromBase64(sender.signingPublicKey), wrapped, fromBase64(m.wrapSignature)))) {
          check.problems.push(`the signature does not verify against the signing key of ${name(m.senderId)}`);
        }
        const senderRole = roles.get(m.senderId);
        if (senderRole !== "owner" && senderRole !== "admin") {
          check.problems.push(
            `signed by ${name(m.senderId)}, who is ${senderRole ? `a ${senderRole}` : "not a member"} of this vault, not an owner or admin`,
          );
        }
      } catch (err) {
        check.problems.push((err as Error).message);
      }
      check.ok = check.problems.length === 0;
    }
    return {
      vaultId: vault.vaultId,
      vaultName: vault.vaultName,
      vaultType: vault.vaultType,
      keyVersion: vault.keyVersion,
      ok: problems.length === 0 && checks.every((c) => c.ok),
      problems,
      warnings,
      members: checks,
      roster: roster && { seq: roster.state.seq, head: roster.state.head },
    };
  }

  /**
   * One's own bundle comes from the unlocked keys (or, locked, the login's copy, checked against
   * its pin); anyone else's through the pinned lookup.
   */
  private async keysOf(userId: string): Promise<Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">> {
    if (userId !== this.account.userId) return this.userKeys(userId);
    if (this.keys) return { publicKey: toBase64(this.keys.publicKeyDer), signingPublicKey: toBase64(this.keys.signingPublicKeyRaw) };
    const own = { publicKey: this.account.publicKey, signingPublicKey: this.account.signingPublicKey };
    await this.checkPin(userId, await bundleFingerprint(own));
    return own;
  }

  // ---- Items ------------------------------------------------------------------------------------

  private async listStoredItems(vaultId: string): Promise<StoredItem[]> {
    return (await this.http.request<{ items: StoredItem[] }>("GET", `/vaults/${encodeURIComponent(vaultId)}/items`)).items;
  }

  /** Every item of the vault, opened (each checked against its vault and item id). */
  async listItems(vaultId: string): Promise<Item[]> {
    const vaultKey = await this.openCurrentVault(vaultId);
    const stored = await this.listStoredItems(vaultId);
    return Promise.all(stored.map(async (s) => toItem(s, await openItem(vaultKey, vaultId, s))));
  }

  async getItem(vaultId: string, itemId: string): Promise<Item> {
    const vaultKey = await this.openCurrentVault(vaultId);
    const stored = await this.http.request<StoredItem>("GET", `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`);
    return toItem(stored, await openItem(vaultKey, vaultId, stored));
  }

  /** The key of the vault as it is now (read again if a rekey lands between reading the vault and its roster). */
  private async openCurrentVault(vaultId: string): Promise<Bytes> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.openVault(await this.getVault(vaultId));
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409 && attempt < 3)) throw err;
      }
    }
  }

  /** Seals a new item under the current key; a rekey in between (409) seals it again under the new one. */
  addItem(vaultId: string, content: ItemContent): Promise<Item> {
    const itemId = globalThis.crypto.randomUUID();
    return this.withCurrentKey(vaultId, async (vaultKey, keyVersion) => {
      const sealed = await sealItem(vaultKey, vaultId, itemId, content);
      const stored = await this.http.request<StoredItem>("POST", `/vaults/${encodeURIComponent(vaultId)}/items`, {
        body: { ...sealed, keyVersion },
      });
      return toItem(stored, content);
    });
  }

  /** Replaces an item's content; with `revision`, only if nobody changed it since (else 409). */
  editItem(vaultId: string, itemId: string, content: ItemContent, opts: { revision?: number } = {}): Promise<Item> {
    return this.withCurrentKey(vaultId, async (vaultKey, keyVersion) => {
      const sealed = await sealItem(vaultKey, vaultId, itemId, content);
      const stored = await this.http.request<StoredItem>(
        "PUT",
        `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`,
        {
          body: { encryptedData: sealed.encryptedData, encryptedName: sealed.encryptedName, revision: opts.revision, keyVersion },
        },
      );
      return toItem(stored, content);
    });
  }

  async deleteItem(vaultId: string, itemId: string): Promise<void> {
    await this.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`);
  }

  /**
   * Runs a write under the vault's current key, sending its `keyVersion` so the server refuses a
   * write racing a rekey (409); then once more under the new key. A 409 with the key unchanged is
   * another conflict (a stale revision, an existing member) and goes to the caller.
   */
  private async withCurrentKey<T>(vaultId: string, write: (vaultKey: Bytes, keyVersion: number) => Promise<T>): Promise<T> {
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

  // ---- Invites ----------------------------------------------------------------------------------

  createInvite(
    email: string,
    role: "admin" | "member" = "member",
    expiresIn?: string,
  ): Promise<{ inviteId: string; token: string; expiresAt: string }> {
    return this.http.request("POST", "/invites", { body: { email, role, expiresIn } });
  }

  listInvites(orgId = this.account.orgId): Promise<Invite[]> {
    return this.http.request("GET", "/invites", { query: { orgId } });
  }

  async revokeInvite(inviteId: string): Promise<void> {
    await this.http.request("DELETE", `/invites/${encodeURIComponent(inviteId)}`);
  }

  /** The organization's audit log, newest first (owners and admins of the organization). */
  auditLog(opts: { orgId?: string; limit?: number; before?: number } = {}): Promise<{ events: AuditRecord[]; nextBefore: number | null }> {
    return this.http.request("GET", "/audit", {
      query: { orgId: opts.orgId ?? this.account.orgId, limit: opts.limit, before: opts.before },
    });
  }

  /** The server's check of the organization's audit hash chain. */
  verifyAuditLog(orgId = this.account.orgId): Promise<{ ok: boolean; count: number; head?: string; brokenAt?: number }> {
    return this.http.request("GET", "/audit/verify", { query: { orgId } });
  }

  /** Checks a token and tells what it is for; registering with it is what uses it up. */
  redeemInvite(token: string): Promise<{ orgId: string; orgName?: string; email: string; role: "admin" | "member"; expiresAt?: string }> {
    return this.http.request("POST", "/invites/redeem", { auth: false, body: { token } });
  }
}

/**
 * Where a wrap the server shows disagrees with the verified roster: the holder is not a member of
 * it, has another role, or the wrap is not the one the roster vouches for (by its SHA-256) or was
 * made by someone else.
 */
async function wrapProblem(
  state: RosterState,
  userId: string,
  shown: Pick<MemberEntry, "encryptedVaultKey" | "senderId" | "role">,
): Promise<SecurityError | undefined> {
  const member = state.members.get(userId);
  const wrap = state.wraps.get(userId);
  if (!member || !wrap)
    return new SecurityError("MEMBER_LIST_MISMATCH", `${userId} is not a member according to the vault's signed roster`, userId);
  if (member.role !== shown.role)
    return new SecurityError(
      "MEMBER_LIST_MISMATCH",
      `the server shows ${userId} as ${shown.role}, the signed roster as ${member.role}`,
      userId,
    );
  let digest = "";
  try {
    digest = await sha256Hex(fromBase64(shown.encryptedVaultKey));
  } catch {
    // not base64: cannot be the vouched wrap
  }
  if (digest !== wrap.sha256) {
    return new SecurityError(
      "WRAP_MISMATCH",
      `the wrap the server shows for ${userId} is not the one the vault's signed roster vouches for (moved from another vault, or an old one)`,
      userId,
    );
  }
  if (wrap.senderId && wrap.senderId !== shown.senderId) {
    return new SecurityError(
      "WRAP_MISMATCH",
      `the wrap for ${userId} was made by ${wrap.senderId} according to the signed roster, not by ${shown.senderId}`,
      userId,
    );
  }
  return undefined;
}

/** Every way the server's member list disagrees with the verified roster: extra or missing users, roles, wraps. */
async function memberListProblems(state: RosterState, members: readonly MemberEntry[]): Promise<SecurityError[]> {
  const problems: SecurityError[] = [];
  const listed = new Set(members.map((m) => m.userId));
  if (listed.size !== members.length)
    problems.push(new SecurityError("MEMBER_LIST_MISMATCH", "the server's member list names a user more than once"));
  for (const userId of state.members.keys()) {
    if (!listed.has(userId))
      problems.push(
        new SecurityError(
          "MEMBER_LIST_MISMATCH",
          `the server's member list leaves out ${userId}, a member according to the signed roster`,
          userId,
        ),
      );
  }
  for (const m of members) {
    const problem = await wrapProblem(state, m.userId, m);
    if (problem) problems.push(problem);
  }
  return problems;
}

function toItem(stored: StoredItem, content: ItemContent): Item {
  return {
    itemId: stored.itemId,
    vaultId: stored.vaultId,
    name: content.name,
    fields: content.fields,
    revision: stored.revision,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  };
}
