/**
 * Which recovery enrolments a device takes as current (docs/design/account-recovery.md, "Versions
 * and supersession"): the newest enrolment it has seen per account, kept, and the checks a trustee's
 * client makes before it releases a share (`RECOVERY_SUPERSEDED`).
 */
import { SecurityError } from "../errors";
import type { KdfParams } from "../../protocol/crypto/primitives";
import { enrolmentOrder } from "../../protocol/formats/recovery";
import { kdfStatementBytes, statementVerifies, type SignedStatement } from "../../protocol/formats/statements";
import type { ClientCore } from "./core";
import type { Trust } from "./trust";

/** A versioned enrolment's signed fields (protocol/formats/recovery.ts); absent in one made before versions. */
export interface ServedVersion {
  version?: number;
  keys?: string;
  kdfVersion?: number;
}

/**
 * Where a device keeps, per account, the newest recovery enrolment it has seen (the user's own
 * device for its enrolments, a trustee's for the enrolments it was shown): in the roster-head store,
 * under this key, `seq` the enrolment's `enrolmentOrder` and `hash` its id.
 */
export const recoveryHeadKey = (userId: string) => `recovery/${userId}`;

/** A trustee's client refuses to release a share of an enrolment the account has moved past. */
const superseded = (userId: string, why: string) =>
  new SecurityError(
    "RECOVERY_SUPERSEDED",
    `this recovery request is for an enrolment ${why}: nothing was approved or released. Ask the user to check their recovery enrolment`,
    userId,
  );

export class RecoveryVersions {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
  ) {}

  /**
   * The signing key a user's enrolment was signed with: the current one, or for an enrolment made
   * under keys since rotated, the one it names, reached through the user's verified key log.
   */
  async signerOf(userId: string, current: string, currentKeys: string, e: ServedVersion): Promise<string> {
    if (e.keys === undefined || e.keys === currentKeys) return current;
    return (await this.trust.signerKeysOf(userId, e.keys)).signingPublicKey;
  }

  /** The version of this account's KDF statement: the newest this device verified, or the server's, signed by this account. */
  async ownKdfVersion(): Promise<number> {
    const account = this.core.account;
    const remembered = (await this.core.kdfMemory.get(account.email))?.version ?? 1;
    const stated = await this.kdfVersionOf(account.userId, account.email, account.signingPublicKey);
    return Math.max(remembered, stated ?? 1);
  }

  /** The version of an account's KDF statement as prelogin shows it, if its signature by `signingPublicKey` verifies. */
  async kdfVersionOf(userId: string, email: string, signingPublicKey: string): Promise<number | undefined> {
    const { kdf, kdfStatement } = await this.core.http.request<{ kdf: KdfParams; kdfStatement?: SignedStatement }>(
      "GET",
      "/auth/prelogin",
      {
        auth: false,
        query: { email },
      },
    );
    if (!kdfStatement || !Number.isSafeInteger(kdfStatement.version)) return undefined;
    const bytes = kdfStatementBytes({ userId, email, kdf, version: kdfStatement.version });
    return (await statementVerifies(bytes, signingPublicKey, kdfStatement.signature)) ? kdfStatement.version : undefined;
  }

  /** Raises the newest enrolment this device has seen for `userId` to `order` (never lowers it). */
  async remember(userId: string, order: number, enrolmentId: string): Promise<void> {
    const seen = await this.core.rosterHeads.get(recoveryHeadKey(userId));
    if (!seen || order > seen.seq) await this.core.rosterHeads.set(recoveryHeadKey(userId), { seq: order, hash: enrolmentId });
  }

  /** The user's own enrolment as the server shows it: not older than the newest this device made, nor another at its version. */
  async checkOwn(me: string, served: { enrolmentId: string } & ServedVersion): Promise<void> {
    const seen = await this.core.rosterHeads.get(recoveryHeadKey(me));
    const order = served.version === undefined ? 0 : enrolmentOrder(served.kdfVersion!, served.version);
    if (seen && (order < seen.seq || (order === seen.seq && seen.hash !== served.enrolmentId)))
      throw superseded(me, "this device replaced with a newer one: the server shows an old enrolment of yours");
  }

  /**
   * An enrolment the account has not moved past, as far as this device knows, else
   * `RECOVERY_SUPERSEDED`: made under the account's current keys (as this device followed its key
   * log) and KDF statement (as prelogin shows it, signed by the account); not older than the newest
   * enrolment of the account this device has seen (an unversioned one is older than any versioned
   * one), nor another enrolment at that version. The newest seen is then raised to it.
   */
  async checkCurrent(
    userId: string,
    email: string,
    signingPublicKey: string,
    accountKeys: string,
    e: { enrolmentId: string } & ServedVersion,
  ): Promise<void> {
    const versioned = e.version !== undefined;
    if (versioned && e.keys !== accountKeys) throw superseded(userId, "made under keys the account has since replaced (a key rotation)");
    const stated = await this.kdfVersionOf(userId, email, signingPublicKey);
    if (versioned && stated !== undefined && stated > e.kdfVersion!)
      throw superseded(userId, "made before the account's latest password change");
    const order = versioned ? enrolmentOrder(e.kdfVersion!, e.version!) : 0;
    const seen = await this.core.rosterHeads.get(recoveryHeadKey(userId));
    if (seen && order < seen.seq)
      throw superseded(
        userId,
        versioned ? "that its user has since replaced" : "made before versions, and this device has seen a newer one",
      );
    if (seen && order === seen.seq && seen.hash !== "" && seen.hash !== e.enrolmentId)
      throw superseded(userId, "at a version this device saw for another enrolment");
    // A KDF statement newer than the enrolment's: versioned enrolments made before it are stale from now on.
    if (versioned && stated !== undefined) await this.remember(userId, enrolmentOrder(stated, 0), "");
    await this.remember(userId, order, e.enrolmentId);
  }
}
