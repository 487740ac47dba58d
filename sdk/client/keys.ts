/**
 * Rotating one's keys: new RSA and Ed25519 keys, made here, taken up in one request. The
 * next entry of the account's key log is signed by the old signing key (the step is the user's)
 * and by the new one; the new private keys are sealed under the same stretched key; the key and KDF
 * statements are signed by the new key; and every vault the user is in gets its key wrapped to the
 * new keys with a `rotate` roster link (signed by the old key, which the roster holds), and the
 * wraps the user made for others signed again with the new key (only wraps the verified roster
 * vouches for: the server cannot get a signature over bytes of its choosing). The server swaps it
 * all in one transaction under the account's version: a rotation from an older read is refused and
 * this client reads again. Peers follow the key log from the keys they pinned (trust/).
 */
import type { PasskeyLogins, PasskeyRewrap } from "./passkey-logins";
import { fromBase64, toBase64, type Bytes } from "../../protocol/encoding";
import { ApiError, SecurityError } from "../errors";
import { groupedFingerprint, keyFingerprint, type AccountKeys } from "../../protocol/crypto/keys";
import { keyLogEntryHash, signKeyLogStep } from "../../protocol/formats/key-log";
import {
  aesKwWrap,
  ed25519Sign,
  gcmEncrypt,
  generateEd25519KeyPair,
  generateRsaKeyPair,
  importEd25519PrivateKey,
  importRsaPrivateKey,
  rsaModulusBytes,
  rsaOaepWrap,
} from "../../protocol/crypto/primitives";
import { rosterWraps, type RosterLink } from "../../protocol/formats/roster";
import { kdfStatementBytes, keyStatementBytes, signStatement } from "../../protocol/formats/statements";
import { inTurns, type ClientCore } from "./core";
import type { Members } from "./members";
import { memberListProblems, wrapProblem, type Rosters } from "./roster";
import type { VerifiedRoster } from "./types";
import type { Trust } from "./trust";
import type { Vaults } from "./vaults";
import type { WrapLabels } from "./wrap-labels";
import type { WrapLabel } from "../../protocol/formats/roster-format";

/** Reads and attempts before a rotation that keeps meeting another change gives up (409 to the caller). */
const MAX_ATTEMPTS = 3;
/** Vaults opened and wrapped at once: their reads overlap, the client's crypto stays a few operations deep. */
const VAULTS_AT_ONCE = 6;

export interface KeyRotationResult {
  /** The account's key version (its key log's length) now. */
  keyVersion: number;
  /** The new keys' fingerprint, grouped: what others compare out of band. */
  fingerprint: string;
  accountVersion: number;
  sessionsEnded: number;
  /** Vaults whose key was wrapped to the new keys. */
  vaults: number;
}

export class KeyRotations {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
    private readonly vaults: Vaults,
    private readonly members: Members,
    private readonly labels: WrapLabels,
    private readonly passkeys: PasskeyLogins,
  ) {}

  async rotateKeys(opts: { rsaBits?: number } = {}): Promise<KeyRotationResult> {
    const keys = this.core.requireKeys();
    const made = await newKeys(keys, opts.rsaBits ?? (await rsaModulusBytes(keys.publicKeyDer)) * 8);
    for (let attempt = 1; ; attempt++) {
      const accountVersion = await this.core.accountVersion();
      const step = await this.signStep(keys, made);
      const rotations = await this.rewrapVaults(keys, made, { ...(await this.labels.current()), keyLogVersion: step.entry.version });
      // The stretched key stays; each passkey that unlocks is wrapped again for the next account version.
      const passkeys = await this.passkeys.rewraps(keys.stretchedKey, accountVersion + 1);
      const answer = await this.send(accountVersion, made, step, rotations, attempt, passkeys);
      if (!answer) continue;
      if (answer.accountVersion !== accountVersion + 1 || answer.keyVersion !== step.entry.version)
        throw new SecurityError(
          "INCONSISTENT",
          `the server answers account version ${answer.accountVersion} and key version ${answer.keyVersion} for a rotation to ${accountVersion + 1} and ${step.entry.version}`,
        );
      await this.takeUp(made, step, rotations, answer.accountVersion);
      return {
        keyVersion: step.entry.version,
        fingerprint: groupedFingerprint(made.keysHex),
        accountVersion: answer.accountVersion,
        sessionsEnded: answer.sessionsEnded,
        vaults: rotations.length,
      };
    }
  }

  /**
   * The next step of the account's key log, signed by the old signing key and the new one, with the
   * key and KDF statements signed by the new key. The log as it stands, verified, must end with
   * the keys this client holds: else they were rotated elsewhere.
   */
  private async signStep(keys: AccountKeys, made: NewKeys): Promise<SignedStep> {
    const { userId, email, kdf } = this.core.account;
    const log = await this.trust.verifiedKeyLog(userId);
    await this.trust.checkOwnLog(log);
    const head = log[log.length - 1]!;
    const heldKeys = await keyFingerprint({ publicKey: toBase64(keys.publicKeyDer), signingPublicKey: toBase64(keys.signingPublicKeyRaw) });
    if (head.keys !== heldKeys) throw rotatedElsewhere();
    const newSigningKey = made.next.signingPrivateKey;
    const entry = await signKeyLogStep(head.entry, { ...made.bundle, at: new Date().toISOString() }, keys.signingPrivateKey, newSigningKey);
    const keyStatement = {
      version: entry.version,
      signature: await signStatement(keyStatementBytes({ userId, email, keys: made.keysHex, version: entry.version }), newSigningKey),
    };
    // The same parameters at the same version, signed again by the new key (a rotation does not show in prelogin's answer).
    const kdfVersion = await this.kdfStatementVersion();
    const kdfStatement = {
      version: kdfVersion,
      signature: await signStatement(kdfStatementBytes({ userId, email, kdf, version: kdfVersion }), newSigningKey),
    };
    return { entry, keyStatement, kdfStatement, kdfVersion };
  }

  /**
   * Every vault, opened as any read opens it (its roster verified, its wrap the one the roster
   * vouches for), a few at a time: its key wrapped to the new keys with a `rotate` roster link, and
   * the wraps this user made for others there signed again.
   */
  private rewrapVaults(keys: AccountKeys, made: NewKeys, label: WrapLabel): Promise<VaultRotation[]> {
    const me = this.core.account.userId;
    const newSigningKey = made.next.signingPrivateKey;
    return this.vaults.listVaults().then((listed) =>
      inTurns(listed, VAULTS_AT_ONCE, async ({ vaultId }) => {
        const { vault, key, roster } = await this.vaults.openCurrent(vaultId);
        const personal = vault.vaultType === "personal";
        const wrapped = personal ? await aesKwWrap(keys.stretchedKey, key) : await rsaOaepWrap(made.next.publicKeyDer, key);
        const encryptedVaultKey = toBase64(wrapped);
        const rosterLink =
          roster &&
          (await this.rosters.nextRosterLink(roster.state, {
            op: "rotate",
            keyVersion: roster.state.keyVersion,
            subjectId: me,
            subjectKey: made.keysHex,
            wraps: await rosterWraps([{ userId: me, encryptedVaultKey }], personal ? label : undefined),
          }));
        return {
          vaultId: vault.vaultId,
          keyVersion: vault.keyVersion,
          encryptedVaultKey,
          wrapSignature: toBase64(await ed25519Sign(newSigningKey, wrapped)),
          ...(rosterLink && { rosterLink }),
          resigned: personal ? [] : await this.resign(vault.vaultId, newSigningKey, roster),
          key,
        };
      }),
    );
  }

  /** The rotation in one request; undefined when a change came first and another attempt reads again. */
  private async send(
    accountVersion: number,
    made: NewKeys,
    step: SignedStep,
    rotations: readonly VaultRotation[],
    attempt: number,
    passkeys: readonly PasskeyRewrap[],
  ): Promise<{ accountVersion: number; keyVersion: number; sessionsEnded: number } | undefined> {
    try {
      return await this.core.http.request("POST", "/users/me/keys", {
        body: {
          accountVersion,
          keyLogEntry: step.entry,
          ...made.sealed,
          keyStatement: step.keyStatement,
          kdfStatement: step.kdfStatement,
          vaults: rotations.map(({ key: _key, ...v }) => v),
          passkeys,
        },
      });
    } catch (err) {
      // The account changed on another device (a password change, a rotation): this client's keys are not the account's.
      if (err instanceof ApiError && err.status === 409 && err.field === "accountVersion") throw accountChangedElsewhere();
      if (err instanceof ApiError && err.status === 409 && err.field === "keyLogEntry") throw rotatedElsewhere();
      // A vault shared with this user, a rekey or a roster link came first: read again.
      if (err instanceof ApiError && (err.status === 409 || this.raced(err)) && attempt < MAX_ATTEMPTS) return undefined;
      throw err;
    }
  }

  /** Taken up only once the server took the rotation: the new keys, the account as it is, the pin at the new log head, the wraps and heads it made. */
  private async takeUp(made: NewKeys, step: SignedStep, rotations: readonly VaultRotation[], accountVersion: number): Promise<void> {
    const { core } = this;
    const account = core.account;
    core.keys = made.next;
    core.accountInfo = { ...account, ...made.bundle, ...made.sealed, accountVersion, keyLogVersion: step.entry.version };
    await this.trust.pinOwnRotation(account.userId, account.email, made.keysHex, step.entry.version, await keyLogEntryHash(step.entry));
    for (const r of rotations) core.vaultKeys.set(r.vaultId, { keyVersion: r.keyVersion, wrap: r.encryptedVaultKey, key: r.key });
    for (const r of rotations) if (r.rosterLink) await this.rosters.sawRosterLink(r.rosterLink);
    const remembered = await core.kdfMemory.get(account.email);
    await core.kdfMemory.set(account.email, {
      kdf: account.kdf,
      userId: account.userId,
      signingPublicKey: made.bundle.signingPublicKey,
      version: step.kdfVersion,
      orgId: remembered?.orgId ?? account.orgId,
    });
  }

  /**
   * The wraps this user made for others in a vault, signed again with the new key: only the ones
   * its verified roster vouches for (by hash, made by this user). A vault without a roster cannot
   * vouch for any: it is adopted first.
   */
  private async resign(
    vaultId: string,
    newSigningKey: CryptoKeyLike,
    opened: VerifiedRoster | null,
  ): Promise<Array<{ userId: string; wrapSignature: string }>> {
    const me = this.core.account.userId;
    // The member list against the roster the vault was opened with; on a disagreement (a change in between), both read again.
    let roster = opened;
    let members = await this.members.members(vaultId);
    if (!roster || (await memberListProblems(roster.state, members)).length > 0)
      ({ members, roster } = await this.members.verifiedMembers(vaultId));
    const sent = members.filter((m) => m.senderId === me && m.userId !== me);
    if (sent.length === 0) return [];
    if (!roster)
      throw new SecurityError(
        "UNSIGNED_VAULT",
        `vault ${vaultId} has no signed roster to vouch for the wraps you made there: an owner adopts one before you rotate your keys`,
      );
    const out = [];
    for (const m of sent) {
      const problem = await wrapProblem(roster.state, m.userId, m);
      if (problem) throw problem;
      out.push({ userId: m.userId, wrapSignature: toBase64(await ed25519Sign(newSigningKey, fromBase64(m.encryptedVaultKey))) });
    }
    return out;
  }

  /** The account's KDF statement version, as this device remembers it (else as prelogin answers it: a lie there only fails the rotation). */
  private async kdfStatementVersion(): Promise<number> {
    const { account } = this.core;
    const remembered = await this.core.kdfMemory.get(account.email);
    if (remembered) return remembered.version;
    const answer = await this.core.http.request<{ kdfStatement?: { version: number } }>("GET", "/auth/prelogin", {
      auth: false,
      query: { email: account.email },
    });
    return answer.kdfStatement?.version ?? 1;
  }

  private raced(err: ApiError): boolean {
    return err.status === 400 && /^vaults\.\d+\.rosterLink\.(seq|prev|keyVersion)$/.test(err.field ?? "");
  }
}

type CryptoKeyLike = Awaited<ReturnType<typeof importEd25519PrivateKey>>;

/** The new keys, made here: their public bundle and fingerprint (hex), the private keys sealed under the same stretched key, and the account's keys to take up. */
interface NewKeys {
  bundle: { publicKey: string; signingPublicKey: string; publicKeySignature: string };
  keysHex: string;
  sealed: { encryptedPrivateKey: string; encryptedSigningPrivateKey: string };
  next: AccountKeys;
}

/** The key log's next step and the statements the new key signed. */
interface SignedStep {
  entry: Awaited<ReturnType<typeof signKeyLogStep>>;
  keyStatement: { version: number; signature: string };
  kdfStatement: { version: number; signature: string };
  kdfVersion: number;
}

/** One vault's part of the rotation, with the vault key it wraps (kept here, never sent). */
interface VaultRotation {
  vaultId: string;
  keyVersion: number;
  encryptedVaultKey: string;
  wrapSignature: string;
  rosterLink?: RosterLink;
  resigned: Array<{ userId: string; wrapSignature: string }>;
  key: Bytes;
}

/** New RSA (of `rsaBits`) and Ed25519 keys, the RSA key signed by the Ed25519 one. */
async function newKeys(keys: AccountKeys, rsaBits: number): Promise<NewKeys> {
  const [rsa, ed] = await Promise.all([generateRsaKeyPair(rsaBits), generateEd25519KeyPair()]);
  const signingPrivateKey = await importEd25519PrivateKey(ed.privateKeyPkcs8);
  const bundle = {
    publicKey: toBase64(rsa.publicKeyDer),
    signingPublicKey: toBase64(ed.publicKeyRaw),
    publicKeySignature: toBase64(await ed25519Sign(signingPrivateKey, rsa.publicKeyDer)),
  };
  return {
    bundle,
    keysHex: await keyFingerprint(bundle),
    sealed: {
      encryptedPrivateKey: toBase64(await gcmEncrypt(keys.stretchedKey, rsa.privateKeyPkcs8)),
      encryptedSigningPrivateKey: toBase64(await gcmEncrypt(keys.stretchedKey, ed.privateKeyPkcs8)),
    },
    next: {
      stretchedKey: keys.stretchedKey,
      rsaPrivateKey: await importRsaPrivateKey(rsa.privateKeyPkcs8),
      signingPrivateKey,
      publicKeyDer: rsa.publicKeyDer,
      signingPublicKeyRaw: ed.publicKeyRaw,
    },
  };
}

/** The account's password or keys changed on another device: this client holds the old ones. */
const accountChangedElsewhere = () =>
  new ApiError(
    409,
    "CONFLICT",
    "your master password or keys were changed on another device: log in again, then rotate if you still need to",
    "accountVersion",
  );

/** The account's keys were rotated on another device: this client holds the old ones. */
const rotatedElsewhere = () =>
  new ApiError(409, "CONFLICT", "your keys were rotated on another device: log in again to use the new ones", "keyLogEntry");
