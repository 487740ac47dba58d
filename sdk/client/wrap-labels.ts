/**
 * Personal wraps name the account state they were made under (`WrapLabel` in
 * protocol/formats/roster-format.ts): the signed KDF statement whose parameters derived the
 * stretched key a personal vault's key is wrapped under, and the account's key-log version.
 *
 * A device left on an old password (another device changed it, and a dishonest server lets this
 * one keep writing) would otherwise go on wrapping new personal vaults under the old password,
 * which the server can open with an old copy of its data once the old password leaks. So:
 * - this session makes no personal wrap under a state older than the newest this device has
 *   verified (`SESSION_STALE`); a wrap its own account signed under a newer state is such news;
 * - a personal wrap labelled with an older state than this device has verified is refused
 *   (`STALE_WRAP`): a server that kept a vault out of a password change, or a device on the old
 *   password, left it open to the old one.
 * Wraps made before labels carry none and are taken as before (links made by an earlier release).
 */
import { sameKdf } from "../../protocol/crypto/kdf";
import type { WrapLabel } from "../../protocol/formats/roster-format";
import type { WrapEntry } from "../../protocol/formats/roster";
import { kdfStatementBytes, statementVerifies, type SignedStatement } from "../../protocol/formats/statements";
import { SecurityError } from "../errors";
import type { ClientCore } from "./core";
import { passwordChangedElsewhere } from "./core";
import type { KdfParams } from "../../protocol/crypto/primitives";
import { keyFingerprint } from "../../protocol/crypto/keys";
import type { Trust } from "./trust";

export class WrapLabels {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
  ) {}

  /**
   * The label of a personal wrap this session makes now: the state it holds. Refused
   * (`SESSION_STALE`) when this device has verified a newer one: nothing is wrapped.
   */
  async current(): Promise<WrapLabel> {
    const held = await this.held();
    const newest = await this.newest(held);
    if (older(held, newest)) throw sessionStale(held, newest);
    return held;
  }

  /**
   * One's own wrap of a personal vault, as its verified roster labels it. A label newer than this
   * session's state is the account's own word that the password or keys changed elsewhere: kept,
   * and this session stops (`SESSION_STALE`). An older label than this device has verified:
   * `STALE_WRAP`. No label: made by an earlier release, taken as before.
   */
  async check(vaultName: string, wrap: WrapEntry): Promise<void> {
    if (wrap.kdfVersion === undefined || wrap.keyLogVersion === undefined) return;
    const label = { kdfVersion: wrap.kdfVersion, keyLogVersion: wrap.keyLogVersion };
    const held = await this.held();
    if (older(held, label)) {
      await this.saw(label);
      throw sessionStale(held, label);
    }
    const newest = await this.newest(held);
    if (older(label, newest))
      throw new SecurityError(
        "STALE_WRAP",
        `the key of your personal vault "${vaultName}" is wrapped under ${describe(label)}, older than ${describe(newest)} this device verified: whoever knows the old password could open it, so it was not used`,
        this.core.account.userId,
      );
  }

  /** The state this session holds from now on. */
  private took(label: Partial<WrapLabel>): void {
    this.core.accountInfo = { ...this.core.account, ...label };
  }

  /** The state this session's keys belong to: from its login; for a login an earlier release saved, worked out once. */
  private async held(): Promise<WrapLabel> {
    const account = this.core.account;
    if (account.kdfVersion !== undefined && account.keyLogVersion !== undefined)
      return { kdfVersion: account.kdfVersion, keyLogVersion: account.keyLogVersion };
    const held = await this.heldByLegacyLogin();
    this.took(held);
    return held;
  }

  /**
   * A login an earlier release saved names no state: the account's own verified key log places the
   * session's keys, and the account's signed KDF statement for the parameters the session derives
   * with gives its version (signed by any key of that log: a rotation signs the same version again).
   * Other parameters than the session's: the password changed since this login.
   */
  private async heldByLegacyLogin(): Promise<WrapLabel> {
    const { account } = this.core;
    const log = await this.trust.verifiedKeyLog(account.userId);
    const keys = await keyFingerprint(account);
    const keyLogVersion = log.find((e) => e.keys === keys)?.entry.version ?? 1;
    const served = await this.core.http.request<{ kdf: KdfParams; kdfStatement?: SignedStatement }>("GET", "/auth/prelogin", {
      auth: false,
      query: { email: account.email },
    });
    if (!sameKdf(served.kdf, account.kdf)) throw passwordChangedElsewhere();
    if (!served.kdfStatement) return { kdfVersion: 1, keyLogVersion };
    const bytes = kdfStatementBytes({
      userId: account.userId,
      email: account.email,
      kdf: account.kdf,
      version: served.kdfStatement.version,
    });
    const signers = [account.signingPublicKey, ...log.map((e) => e.entry.signingPublicKey)];
    for (const signer of signers)
      if (await statementVerifies(bytes, signer, served.kdfStatement.signature))
        return { kdfVersion: served.kdfStatement.version, keyLogVersion };
    throw new SecurityError("KDF_CHANGED", "the server holds a KDF statement for your account that you did not sign");
  }

  /** The newest state this device verified for the account: its last login's statement, its own pin, and any newer one it saw its account sign. */
  private async newest(held: WrapLabel): Promise<WrapLabel> {
    const remembered = await this.core.kdfMemory.get(this.core.account.email);
    return {
      kdfVersion: Math.max(held.kdfVersion, remembered?.version ?? 0, remembered?.seen?.kdfVersion ?? 0),
      keyLogVersion: Math.max(
        held.keyLogVersion,
        await this.trust.ownKeyLogVersion(this.core.account.userId),
        remembered?.seen?.keyLogVersion ?? 0,
      ),
    };
  }

  private async saw(label: WrapLabel): Promise<void> {
    const { email } = this.core.account;
    const remembered = await this.core.kdfMemory.get(email);
    if (!remembered) return;
    const seen = remembered.seen ?? { kdfVersion: 0, keyLogVersion: 0 };
    await this.core.kdfMemory.set(email, {
      ...remembered,
      seen: { kdfVersion: Math.max(seen.kdfVersion, label.kdfVersion), keyLogVersion: Math.max(seen.keyLogVersion, label.keyLogVersion) },
    });
  }
}

const older = (a: WrapLabel, b: WrapLabel) => a.kdfVersion < b.kdfVersion || a.keyLogVersion < b.keyLogVersion;

const describe = (l: WrapLabel) => `KDF statement ${l.kdfVersion} and key log version ${l.keyLogVersion}`;

const sessionStale = (held: WrapLabel, newer: WrapLabel) =>
  new SecurityError(
    "SESSION_STALE",
    `your master password or keys were changed on another device (${describe(newer)}; this session holds ${describe(held)}): nothing was wrapped under the old ones; log in again`,
  );
