/**
 * Cutting an old master password off. A plain password change (password.ts) seals the same
 * private keys and wraps the same vault keys under the new password: whoever holds the old password
 * and a copy of the server's data from before the change (a backup, a dishonest operator) still
 * opens the private keys, and through them every vault key, and so every item written after the
 * change. This part takes what that copy holds away from them, in steps the server applies one by
 * one, each atomically:
 *
 * 1. the account's keys rotated through its signed key log (keys.ts): new RSA and Ed25519 keys,
 *    sealed under the new password's key only;
 * 2. each personal vault rekeyed (rekey.ts): a fresh key, every item, kept revision and trashed
 *    item re-encrypted under it, wrapped under the new password's key;
 * 3. each shared vault the user manages (owner or admin, as its verified roster says, not as the
 *    server lists it) rekeyed, its fresh key wrapped to every member, the user's new keys among them.
 *
 * Shared vaults the user may not rekey (a member only, or a vault without a signed roster) are
 * listed, not touched: their key stays what the old copy opens until an owner rekeys them.
 *
 * Interrupted, it leaves every vault readable with the new password (no step leaves a key
 * wrapped under anything else): the keys rotated or not, each vault rekeyed or not. The error it
 * throws (`ProtectionInterruptedError`) carries what is done; `protect({ resume })` goes on from
 * there, and running it again from the start is as safe, only slower.
 */
import { mayDo } from "../../protocol/vault-roles";
import { SecurityError } from "../errors";
import type { KeyRotationResult, KeyRotations } from "./keys";
import type { Rekeys } from "./rekey";
import type { Rosters } from "./roster";
import type { Vault } from "./types";
import type { Vaults } from "./vaults";
import type { ClientCore } from "./core";

/** One vault the protection went through, or left. */
export interface ProtectedVault {
  vaultId: string;
  vaultName: string;
  vaultType: "personal" | "shared";
}

/** A vault the protection could not rekey, and why: its key stays what the old password and an old copy of the server's data open. */
export interface VaultLeft extends ProtectedVault {
  reason: "not-a-manager" | "unsigned";
  /** In words, with what to do. */
  detail: string;
}

/** What a protection has done so far: passed back to `protect({ resume })` after an interruption. */
export interface ProtectionProgress {
  /** The key-log version the rotation reached, once done. */
  keysRotated?: { keyVersion: number; fingerprint: string };
  /** Vault ids rekeyed since the rotation. */
  rekeyed: string[];
}

export interface ProtectionResult {
  /** The account's key-log version and the new keys' grouped fingerprint (what others may compare). */
  keyVersion: number;
  fingerprint: string;
  /** The account's other sessions, ended by the rotation. */
  sessionsEnded: number;
  rekeyed: ProtectedVault[];
  /** Shared vaults left as they were: someone else must rekey them (their owners), or they must be adopted first. */
  left: VaultLeft[];
}

export interface ProtectionStep {
  phase: "rotate" | "rekey";
  /** The vault being rekeyed. */
  vault?: ProtectedVault;
  done: number;
  total: number;
}

/** A protection stopped part way: `progress` is what is done (pass it to `protect({ resume })`), `cause` what stopped it. */
export class ProtectionInterruptedError extends Error {
  override readonly name = "ProtectionInterruptedError";
  readonly code = "PROTECTION_INTERRUPTED";
  constructor(
    readonly progress: ProtectionProgress,
    override readonly cause: unknown,
  ) {
    super(
      `the protection of your account stopped part way (${progress.keysRotated ? "keys rotated" : "keys not yet rotated"}, ` +
        `${progress.rekeyed.length} vault${progress.rekeyed.length === 1 ? "" : "s"} rekeyed): every vault still opens with your new ` +
        `password; run it again to finish. ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

export class AccountProtection {
  constructor(
    private readonly core: ClientCore,
    private readonly rosters: Rosters,
    private readonly vaults: Vaults,
    private readonly keyRotations: KeyRotations,
    private readonly rekeys: Rekeys,
  ) {}

  async protect(opts: { resume?: ProtectionProgress; onProgress?: (step: ProtectionStep) => void } = {}): Promise<ProtectionResult> {
    this.core.requireKeys();
    const progress: ProtectionProgress = {
      ...(opts.resume?.keysRotated && { keysRotated: opts.resume.keysRotated }),
      rekeyed: [...(opts.resume?.rekeyed ?? [])],
    };
    const report = opts.onProgress ?? (() => {});
    let rotation: KeyRotationResult | undefined;
    try {
      // The keys first: a vault rekeyed before it would wrap its fresh key to the old RSA key, which the old copy opens.
      if (!progress.keysRotated) {
        report({ phase: "rotate", done: 0, total: 1 });
        rotation = await this.keyRotations.rotateKeys();
        progress.keysRotated = { keyVersion: rotation.keyVersion, fingerprint: rotation.fingerprint };
        report({ phase: "rotate", done: 1, total: 1 });
      }
      const { toRekey, left } = await this.plan(new Set(progress.rekeyed));
      const rekeyed: ProtectedVault[] = [];
      for (const [i, vault] of toRekey.entries()) {
        report({ phase: "rekey", vault, done: i, total: toRekey.length });
        try {
          await this.rekeys.rekey(vault.vaultId);
        } catch (err) {
          // A vault without a signed roster cannot be rekeyed for the members the server lists: it is adopted first.
          if (err instanceof SecurityError && err.code === "UNSIGNED_VAULT") {
            left.push({ ...vault, reason: "unsigned", detail: err.message });
            continue;
          }
          throw err;
        }
        progress.rekeyed.push(vault.vaultId);
        rekeyed.push(vault);
      }
      report({ phase: "rekey", done: toRekey.length, total: toRekey.length });
      return {
        keyVersion: progress.keysRotated.keyVersion,
        fingerprint: progress.keysRotated.fingerprint,
        sessionsEnded: rotation?.sessionsEnded ?? 0,
        rekeyed,
        left,
      };
    } catch (err) {
      throw new ProtectionInterruptedError(progress, err);
    }
  }

  /**
   * Which vaults to rekey: every personal vault, and every shared one whose verified roster makes
   * this user an owner or admin (the server's listed role decides only for a vault without a
   * roster, which is then left: it cannot be rekeyed before it is adopted).
   */
  private async plan(done: ReadonlySet<string>): Promise<{ toRekey: ProtectedVault[]; left: VaultLeft[] }> {
    const me = this.core.account.userId;
    const toRekey: ProtectedVault[] = [];
    const left: VaultLeft[] = [];
    for (const vault of await this.vaults.listVaults()) {
      if (done.has(vault.vaultId)) continue;
      const named = describe(vault);
      if (vault.vaultType === "personal") {
        toRekey.push(named);
        continue;
      }
      const roster = await this.rosters.verifiedRoster(vault.vaultId);
      if (!roster) {
        left.push({
          ...named,
          reason: "unsigned",
          detail: `"${vault.vaultName}" has no signed roster: ${mayDo(vault.role, "adoptRoster") ? "adopt it" : "ask an owner to adopt it"}, which gives it a fresh key`,
        });
        continue;
      }
      const role = roster.state.members.get(me)?.role;
      if (role && mayDo(role, "rekey")) toRekey.push(named);
      else
        left.push({
          ...named,
          reason: "not-a-manager",
          detail: `you are a ${role ?? "member"} of "${vault.vaultName}": ask one of its owners or admins to rekey it`,
        });
    }
    return { toRekey, left };
  }
}

function describe(vault: Vault): ProtectedVault {
  return { vaultId: vault.vaultId, vaultName: vault.vaultName, vaultType: vault.vaultType };
}
