/**
 * k-of-n account recovery: enrolment, a trustee's approval, the recovery on a new device
 * (formats: protocol/formats/recovery.ts). Why and how: docs/design/account-recovery.md.
 */
import { split } from "shamir-secret-sharing";
import { fromBase64, toBase64, toBase64Url, type Bytes } from "../../protocol/encoding";
import { SecurityError, WeakPasswordError } from "../errors";
import { checkMasterPassword, emailWords } from "../password-strength";
import { keyFingerprint, openAccountKeys } from "../../protocol/crypto/keys";
import {
  generateRsaKeyPair,
  importRsaPrivateKey,
  randomBytes,
  rsaOaepUnwrap,
  rsaOaepWrap,
  type KdfParams,
} from "../../protocol/crypto/primitives";
import {
  approvalBytes,
  confirmationCode,
  enrolmentBytes,
  enrolmentOrder,
  enrolmentStatementOf,
  hashOfBase64,
  MAX_ENROLMENT_VERSION,
  normalizeRecoveryCode,
  openWithShares,
  recoveryCode,
  sealRecoveryCopy,
  sessionProofBytes,
} from "../../protocol/formats/recovery";
import { signStatement, statementVerifies } from "../../protocol/formats/statements";
import { userIdForKey } from "../../protocol/ids";
import { normalizeEmail } from "../../protocol/email";
import type { ClientCore } from "./core";
import type { LoginAnswer } from "./login";
import type { Session } from "./session";
import type { Trust } from "./trust";
import type { PasswordChanges } from "./password";
import type { KeyRotations } from "./keys";
import type { Account } from "./types";
import { recoveryHeadKey, RecoveryVersions, type ServedVersion } from "./recovery-versions";

interface ServedEnrolment extends ServedVersion {
  enrolmentId: string;
  userId: string;
  threshold: number;
  copy: string;
  signature: string;
  createdAt: string;
  current: boolean;
  shares: Array<{ trusteeId: string; encryptedShare: string; trusteeKeys: string }>;
}

export interface RecoveryTask {
  requestId: string;
  userId: string;
  email: string;
  createdAt: string;
  expiresAt: string;
  threshold: number;
  approvedBy: string[];
  approved: boolean;
  /** The enrolment's signed version; absent for one made before versions (`legacy`: its user should enrol again). */
  version?: number;
  legacy: boolean;
}

/** What the recovering device keeps between asking and finishing (it holds the one-time private key: keep it private). */
export interface PendingRecovery {
  email: string;
  requestId: string;
  requestToken: string;
  /** The one-time RSA key's private half, PKCS#8, base64. */
  privateKey: string;
  publicKey: string;
  /** What the user reads out to each trustee. */
  code: string;
  expiresAt: string;
  /**
   * This device's secret for its requests for the email (base64url, 32 bytes): a request started
   * again with it replaces this one, and no one without it can (absent in a request an earlier
   * release started).
   */
  binding?: string;
}

interface RecoveryState {
  status: "pending" | "completed" | "cancelled";
  threshold: number;
  approvals: Array<{ trusteeId: string; encryptedShare: string; signature: string; approvedAt: string }>;
  userId?: string;
  enrolmentId?: string;
  copy?: string;
  email?: string;
  kdf?: KdfParams;
  publicKey?: string;
  signingPublicKey?: string;
  encryptedPrivateKey?: string;
  encryptedSigningPrivateKey?: string;
}

export type RecoveryRenewal = "renewed" | "stale" | "none";

/** Trust in a trustee's keys that something other than the server vouches for. */
const VERIFIED = new Set(["checked", "invite"]);

export class Recovery {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly session: Session,
    private readonly passwords: PasswordChanges,
    private readonly rotations: KeyRotations,
  ) {
    this.versions = new RecoveryVersions(core, trust);
  }

  private readonly versions: RecoveryVersions;

  // ---- Enrolment -----------------------------------------------------------------------------------

  /** Enrols (or enrols again): `threshold` of `trusteeIds` (2 to 10 owners or admins whose keys this device verified) recover the account. */
  async enrol(trusteeIds: readonly string[], threshold: number): Promise<{ enrolmentId: string }> {
    const keys = this.core.requireKeys();
    const me = this.core.account.userId;
    if (threshold < 2 || threshold > trusteeIds.length)
      throw new RangeError("a recovery needs at least 2 trustees' approvals, and no more than there are trustees");
    const trustees = [];
    for (const raw of trusteeIds) {
      const trusteeId = raw.toLowerCase();
      // The keys the share goes to: the pinned ones (userKeys refuses others), and only a pin the user verified.
      const bundle = await this.trust.userKeys(trusteeId);
      const { trust } = await this.trust.fingerprint(trusteeId);
      if (!trust || !VERIFIED.has(trust))
        throw new SecurityError(
          "TRUSTEE_UNVERIFIED",
          `${bundle.email}'s keys are known here only as the server showed them: compare fingerprints with them (trust them) before making them a trustee`,
          trusteeId,
        );
      trustees.push({ trusteeId, bundle });
    }
    const secret = randomBytes(32);
    const shares = await split(secret, trustees.length, threshold);
    const enrolmentId = globalThis.crypto.randomUUID();
    // One past the newest this device enrolled, or the server's current one (signed by this account) shows.
    const [served, seen, kdfVersion] = await Promise.all([
      this.served(),
      this.core.rosterHeads.get(recoveryHeadKey(me)),
      this.versions.ownKdfVersion(),
    ]);
    const version = Math.max(served?.version ?? 0, (seen?.seq ?? 0) % (MAX_ENROLMENT_VERSION + 1)) + 1;
    const accountKeys = await keyFingerprint(this.core.account);
    const copy = await sealRecoveryCopy(secret, me, enrolmentId, keys.stretchedKey);
    const wrapped = await Promise.all(
      trustees.map(async ({ trusteeId, bundle }, i) => ({
        trusteeId,
        encryptedShare: toBase64(await rsaOaepWrap(fromBase64(bundle.publicKey), new Uint8Array(shares[i]!))),
        trusteeKeys: await keyFingerprint(bundle),
      })),
    );
    const signed = { version, keys: accountKeys, kdfVersion };
    const statement = await enrolmentStatementOf({ enrolmentId, userId: me, threshold, copy, shares: wrapped, ...signed });
    const signature = await signStatement(enrolmentBytes(statement), keys.signingPrivateKey);
    await this.core.http.request("PUT", "/users/me/recovery", {
      body: { enrolmentId, threshold, copy, signature, shares: wrapped, ...signed },
    });
    await this.versions.remember(me, enrolmentOrder(kdfVersion, version), enrolmentId);
    return { enrolmentId };
  }

  /** The server's answer for this account's enrolment, checked against its own signature (none: null). */
  private async served(): Promise<ServedEnrolment | null> {
    let served: ServedEnrolment;
    try {
      served = await this.core.http.request<ServedEnrolment>("GET", "/users/me/recovery");
    } catch (err) {
      if ((err as { status?: number }).status === 404) return null;
      throw err;
    }
    const account = this.core.account;
    await this.checkSigned(
      served,
      await this.versions.signerOf(account.userId, account.signingPublicKey, await keyFingerprint(account), served),
    );
    return served;
  }

  /**
   * This account's enrolment, checked against its own signature and against the newest one this
   * device made (an older one is `RECOVERY_SUPERSEDED`): its trustees, k, its version, and whether
   * it still opens the account (a password change or key rotation since leaves it stale).
   * `reenrol`: stale, or made before versions (its trustees cannot tell it from a replaced one):
   * enrol again (`renew`).
   */
  async status(): Promise<{
    threshold: number;
    trustees: string[];
    current: boolean;
    createdAt: string;
    version?: number;
    reenrol: boolean;
  } | null> {
    const served = await this.served();
    if (!served) return null;
    await this.versions.checkOwn(this.core.account.userId, served);
    return {
      threshold: served.threshold,
      trustees: served.shares.map((s) => s.trusteeId),
      current: served.current,
      createdAt: served.createdAt,
      ...(served.version !== undefined && { version: served.version }),
      reenrol: !served.current || served.version === undefined,
    };
  }

  /**
   * After a password change or key rotation (or for an enrolment made before versions): an
   * enrolment to re-make is made again to the same trustees and k (`renewed`); `stale` when it
   * cannot be (a trustee's keys are no longer verified here, or changed), which the user must see;
   * `none` without an enrolment or with a current, versioned one.
   */
  async renew(): Promise<RecoveryRenewal> {
    const status = await this.status();
    if (!status || !status.reenrol) return "none";
    try {
      await this.enrol(status.trustees, status.threshold);
      return "renewed";
    } catch (err) {
      if (err instanceof SecurityError) return "stale";
      throw err;
    }
  }

  async unenrol(): Promise<void> {
    await this.core.http.request("DELETE", "/users/me/recovery");
  }

  /** Requests to recover this account (pending and past): one this user did not make is cancelled with `cancel`. */
  requests(): Promise<{ requests: Array<{ requestId: string; status: string; createdAt: string; approvedBy?: string[] }> }> {
    return this.core.http.request("GET", "/users/me/recovery/requests");
  }

  async cancel(requestId: string): Promise<void> {
    await this.core.http.request("DELETE", `/users/me/recovery/requests/${encodeURIComponent(requestId)}`);
  }

  // ---- Trustees ------------------------------------------------------------------------------------

  /** Requests this user is a trustee of, each with its enrolment checked against the requester's pinned keys. */
  async tasks(): Promise<RecoveryTask[]> {
    const { tasks } = await this.core.http.request<{ tasks: ServedTask[] }>("GET", "/recovery/tasks");
    const out: RecoveryTask[] = [];
    for (const t of tasks) {
      const { email } = await this.checkTask(t);
      const version = t.enrolment.version;
      out.push({
        requestId: t.request.requestId,
        userId: t.request.userId,
        email,
        createdAt: t.request.createdAt,
        expiresAt: t.request.expiresAt,
        threshold: t.enrolment.threshold,
        approvedBy: t.request.approvedBy ?? [],
        approved: t.approved,
        ...(version !== undefined && { version }),
        legacy: version === undefined,
      });
    }
    return out;
  }

  /**
   * Approves a request once `code` (what the user's new device shows, read out by the user over a
   * channel the trustee trusts) is the one its one-time key gives: this trustee's share, re-wrapped
   * to that key and signed. A code that differs is `RECOVERY_CODE_MISMATCH`: whoever asked is not
   * the device the user holds, or the server swapped its key. Answers the confirmation code the
   * trustee reads back to the user, which vouches for the account's keys as this trustee knows them.
   */
  async approve(requestId: string, code: string): Promise<{ confirmation: string }> {
    const keys = this.core.requireKeys();
    const me = this.core.account.userId;
    const { tasks } = await this.core.http.request<{ tasks: ServedTask[] }>("GET", "/recovery/tasks");
    const task = tasks.find((t) => t.request.requestId === requestId.toLowerCase());
    if (!task) throw new SecurityError("RECOVERY_UNKNOWN", `no pending recovery request ${requestId} names you as a trustee`);
    const { mine, requesterKeys, email: requesterEmail } = await this.checkTask(task);
    const expected = await recoveryCode(task.request.publicKey, normalizeEmail(requesterEmail));
    if (normalizeRecoveryCode(code) !== normalizeRecoveryCode(expected))
      throw new SecurityError(
        "RECOVERY_CODE_MISMATCH",
        "the code is not the one this request's key gives: do not approve; the request did not come from the device the user holds",
        task.request.userId,
      );
    const share = await rsaOaepUnwrap(keys.rsaPrivateKey, fromBase64(mine.encryptedShare));
    const encryptedShare = toBase64(await rsaOaepWrap(fromBase64(task.request.publicKey), share));
    const signature = await signStatement(
      approvalBytes({
        requestId: task.request.requestId,
        userId: task.request.userId,
        enrolmentId: task.enrolment.enrolmentId,
        trusteeId: me,
        requestKey: await hashOfBase64(task.request.publicKey),
        share: await hashOfBase64(encryptedShare),
      }),
      keys.signingPrivateKey,
    );
    await this.core.http.request("POST", `/recovery/requests/${task.request.requestId}/approvals`, { body: { encryptedShare, signature } });
    // What the trustee reads back: the device checks it against the keys it recovers (`finish`).
    return { confirmation: await confirmationCode(task.request.publicKey, requesterKeys) };
  }

  // ---- The recovering device -----------------------------------------------------------------------

  /** Asks to recover `email` from this device: keep the answer (it holds the one-time key), and read `code` out to each trustee. */
  async start(rawEmail: string, previous?: PendingRecovery): Promise<PendingRecovery> {
    const email = normalizeEmail(rawEmail);
    const pair = await generateRsaKeyPair(3072);
    const publicKey = toBase64(pair.publicKeyDer);
    // The same device starting over replaces its own request; strangers' requests displace none.
    const binding = previous?.email === email && previous.binding ? previous.binding : toBase64Url(randomBytes(32));
    const res = await this.core.http.request<{ requestId: string; requestToken: string; expiresAt: string }>("POST", "/recovery/requests", {
      auth: false,
      body: { email, publicKey, binding },
    });
    return {
      email,
      requestId: res.requestId,
      requestToken: res.requestToken,
      privateKey: toBase64(pair.privateKeyPkcs8),
      publicKey,
      code: await recoveryCode(publicKey, email),
      expiresAt: res.expiresAt,
      binding,
    };
  }

  /** How many trustees approved so far, of the k needed. */
  async progress(pending: PendingRecovery): Promise<{ approvals: number; threshold: number; status: string }> {
    const s = await this.state(pending);
    return { approvals: s.approvals.length, threshold: s.threshold, status: s.status };
  }

  /**
   * With k approvals: rebuilds the secret and opens the copy and the account's keys; checks them
   * against `confirmation`, the code a trustee read back (it is made over the keys the trustee has
   * pinned for this account, so keys a server made up do not match: `RECOVERY_UNCONFIRMED`); then
   * signs in (every other session of the account ends), sets `newPassword` (checked for strength
   * first, and meeting the organization's least KDF cost), and rotates the account's keys.
   */
  async finish(pending: PendingRecovery, newPassword: string, confirmation: string): Promise<Account> {
    const verdict = await checkMasterPassword(newPassword, emailWords(pending.email));
    if (!verdict.ok) throw new WeakPasswordError(verdict.reasons, verdict.suggestions);
    const s = await this.state(pending);
    if (s.copy === undefined || s.userId === undefined || s.enrolmentId === undefined || s.approvals.length < s.threshold)
      throw new SecurityError("RECOVERY_NOT_APPROVED", `${s.approvals.length} of the ${s.threshold} approvals this recovery needs are in`);
    const stored = {
      publicKey: s.publicKey!,
      signingPublicKey: s.signingPublicKey!,
      encryptedPrivateKey: s.encryptedPrivateKey!,
      encryptedSigningPrivateKey: s.encryptedSigningPrivateKey!,
    };
    // The account is the one its signing key names: the server cannot pair the copy with another account's keys.
    if ((await userIdForKey(fromBase64(stored.signingPublicKey))) !== s.userId)
      throw new SecurityError("INCONSISTENT", "the recovered account's id is not the one its signing key gives");
    // Bounded whatever the server says: at most ten trustees, each counted once (the shares are combined k at a time).
    if (
      s.threshold < 2 ||
      s.threshold > 10 ||
      s.approvals.length > 10 ||
      new Set(s.approvals.map((a) => a.trusteeId)).size !== s.approvals.length
    )
      throw new SecurityError("INCONSISTENT", "the server answers a recovery with more approvals or trustees than an enrolment can have");
    const oneTime = await importRsaPrivateKey(fromBase64(pending.privateKey));
    const shares: Bytes[] = [];
    for (const a of s.approvals) {
      try {
        shares.push(await rsaOaepUnwrap(oneTime, fromBase64(a.encryptedShare)));
      } catch {
        // Not wrapped to this device's key: left out.
      }
    }
    const stretchedKey = await openWithShares(shares, s.threshold, s.userId, s.enrolmentId, s.copy);
    if (!stretchedKey)
      throw new SecurityError(
        "RECOVERY_FAILED",
        "the approvals do not open this account's recovery copy: fewer than k of them are the trustees' shares",
      );
    const keys = await openAccountKeys(stretchedKey, stored);
    const expected = await confirmationCode(pending.publicKey, await keyFingerprint(stored));
    if (normalizeRecoveryCode(confirmation) !== normalizeRecoveryCode(expected))
      throw new SecurityError(
        "RECOVERY_UNCONFIRMED",
        "the code your trustee read back is not the one your recovered keys give: these are not the keys your colleagues know for you. Nothing was used; ask the trustee to read it again",
        s.userId,
      );
    const proof = await signStatement(sessionProofBytes({ requestId: pending.requestId, userId: s.userId }), keys.signingPrivateKey);
    const login = await this.core.http.request<LoginAnswer>("POST", `/recovery/requests/${pending.requestId}/session`, {
      auth: false,
      body: { requestToken: pending.requestToken, signature: proof, deviceName: this.core.deviceName },
    });
    await this.session.takeUp(s.email ?? pending.email, login, stretchedKey, s.kdf!);
    await this.passwords.setPasswordAfterRecovery(newPassword);
    await this.rotations.rotateKeys();
    return this.core.account;
  }

  private state(pending: PendingRecovery): Promise<RecoveryState> {
    return this.core.http.request<RecoveryState>("POST", `/recovery/requests/${pending.requestId}/state`, {
      auth: false,
      body: { requestToken: pending.requestToken },
    });
  }

  private async checkSigned(e: Omit<ServedEnrolment, "current" | "createdAt"> & ServedVersion, signingPublicKey: string): Promise<void> {
    const statement = await enrolmentStatementOf(e);
    if (!(await statementVerifies(enrolmentBytes(statement), signingPublicKey, e.signature)))
      throw new SecurityError("RECOVERY_TAMPERED", "the recovery enrolment is not the one its user signed", e.userId);
  }

  /**
   * A task's enrolment, signed by the requester's pinned key, naming this trustee with this device's
   * own keys, and not superseded (`RecoveryVersions.checkCurrent`).
   */
  private async checkTask(t: ServedTask): Promise<{ email: string; mine: { encryptedShare: string }; requesterKeys: string }> {
    const requester = await this.trust.userKeys(t.request.userId);
    const requesterKeys = await keyFingerprint(requester);
    const signer = await this.versions.signerOf(t.request.userId, requester.signingPublicKey, requesterKeys, t.enrolment);
    await this.checkSigned({ ...t.enrolment, userId: t.request.userId, shares: t.trustees }, signer);
    const me = this.core.account.userId;
    const mine = t.trustees.find((x) => x.trusteeId === me);
    const own = await keyFingerprint(this.core.account);
    if (!mine || mine.trusteeKeys !== own)
      throw new SecurityError("RECOVERY_TAMPERED", "this recovery's enrolment does not name you with your own keys", t.request.userId);
    await this.versions.checkCurrent(t.request.userId, requester.email, requester.signingPublicKey, requesterKeys, t.enrolment);
    return { email: requester.email, mine, requesterKeys };
  }
}

interface ServedTask {
  request: {
    requestId: string;
    userId: string;
    publicKey: string;
    status: string;
    createdAt: string;
    expiresAt: string;
    approvedBy?: string[];
  };
  enrolment: { enrolmentId: string; threshold: number; copy: string; signature: string; createdAt: string } & ServedVersion;
  trustees: Array<{ trusteeId: string; trusteeKeys: string; encryptedShare: string }>;
  approved: boolean;
}
