/**
 * What a login costs and counts, for the auth service: the decoys an unknown address is answered
 * and compared with, the per-address limits, the attempts counted (and given back on success),
 * and the check of a second step's answer. The rules are lib/domain/accounts/login-limits.ts and
 * lib/domain/accounts/second-factors.ts; this holds their counters and secrets.
 */
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { addressLimit, retryAfterSec } from "../domain/accounts/address-limits";
import type { UserId } from "../domain/ids";
import { decideLoginAttempt, KNOWN_ADDRESS_MS, LOGIN_REFUSAL_MESSAGE } from "../domain/accounts/login-limits";
import { rateLimited } from "../domain/accounts/refusals";
import {
  decideDailySecondSteps,
  decideTotpStep,
  hashRecoveryCode,
  SECOND_STEP_DAY_MS,
  SECOND_STEP_DAY_REFUSAL,
  type SecondFactor,
} from "../domain/accounts/second-factors";
import { STATEMENT_VERSION } from "../domain/accounts/statements";
import type { SignedStatement } from "../domain/types";
import { limitPerAddress } from "../limits/counters";
import type { Runtime } from "../runtime";
import { hashAuthHash } from "./auth-hash";
import { totpStep, TOTP_SECRET_PURPOSE, verifyAuthentication } from "./factor-checks";

/** An id no account has (ids are version 8 UUIDs of a key's hash): the read an unknown address costs. */
export const NO_USER = "00000000-0000-8000-8000-000000000000" as UserId;
/** The id the writes of a second step after a wrong password run on: they match nothing. */
const NOTHING = "00000000-0000-4000-8000-000000000000";

/** A login's pending second step, sealed for the server alone (lib/auth/sealed.ts) and handed to the client. */
export interface PendingStep {
  id: string;
  userId: UserId;
  /**
   * Whether the first step's password was right, as 1 or 0: a value of one length either way (the
   * sealed token's length must not tell), and the second step answers the same for both.
   */
  pw: 0 | 1;
  /** The account's key version the password was compared against: a password change since refuses the step. */
  accountVersion: number;
  email: string;
  source: string;
  deviceName: string;
  /** The first step's counted attempts, given back when the second succeeds. */
  counted: string[];
  /** The WebAuthn challenge the security keys sign. */
  challenge?: string;
}
export const STEP_PURPOSE = "login-second-step";

/** A second step's answer: exactly one of a TOTP code, a recovery code or a security key's response. */
export interface SecondStepAnswer {
  totpCode?: string;
  recoveryCode?: string;
  webauthn?: Record<string, unknown>;
}

/** What a second step may answer with, as the account's factors allow. */
export function factorMethods(factors: readonly SecondFactor[]): Array<"totp" | "webauthn" | "recovery-code"> {
  return [
    ...(factors.some((f) => f.kind === "totp") ? (["totp"] as const) : []),
    ...(factors.some((f) => f.kind === "webauthn") ? (["webauthn"] as const) : []),
    "recovery-code" as const,
  ];
}

export class Logins {
  /** Compared against for unknown emails, so they cost what a wrong hash costs. */
  readonly decoyHash: Promise<string>;
  readonly rp: { rpId: string; origins?: string[] };

  constructor(private readonly rt: Runtime) {
    this.decoyHash = hashAuthHash(Buffer.alloc(32), rt.config.scryptCost);
    this.rp = { rpId: rt.config.webauthnRpId, ...(rt.config.webauthnOrigins && { origins: rt.config.webauthnOrigins }) };
  }

  /**
   * What prelogin answers as the KDF statement of an address without one (unknown, or an account
   * not upgraded yet): 64 stable bytes from a server secret, which look like a signature to anyone
   * who does not hold the account's signing key. A device that does, and remembers the account's
   * parameters, never needs it: it checks a statement only when the parameters change.
   */
  decoyStatement(address: string): SignedStatement {
    const bytes = Buffer.concat([
      this.rt.serverHmac("prelogin-kdf-statement-1", address),
      this.rt.serverHmac("prelogin-kdf-statement-2", address),
    ]);
    return { version: STATEMENT_VERSION, signature: bytes.toString("base64") };
  }

  /** Prelogin and registration (without an invite) per client address. */
  perAddress(clientIp: string | undefined, what: "prelogin" | "register"): Promise<void> {
    const { config, counters, metrics } = this.rt;
    const limit = addressLimit(what, what === "prelogin" ? config.preloginRateLimit : config.registerRateLimit);
    return limitPerAddress(counters, clientIp, limit, () => metrics.rateLimited(what));
  }

  /**
   * Counts one attempt on each counter, one after the other, stopping at the first that refuses:
   * an attempt refused by its own address's counters never counts against the account, so one
   * stranger's flood cannot use up what the owner, elsewhere, signs in within. Answers the keys counted.
   */
  async countAttempt(keys: [string, string, string], address: string, source: string, perEmail?: number): Promise<string[]> {
    const { config, counters, metrics } = this.rt;
    const window = config.loginFailureWindowMs;
    const limits = {
      perEmailAndAddress: config.loginMaxFailures,
      perAddress: config.loginAddressMaxFailures,
      perEmail: perEmail ?? config.loginEmailMaxFailures,
    };
    const attempts = { emailAndAddress: 0, address: 0, email: 0, knownAddress: await this.isKnown(address, source) };
    const counted: string[] = [];
    for (const [i, field] of (["emailAndAddress", "address", "email"] as const).entries()) {
      const w = await counters.add(keys[i]!, 1, window);
      counted.push(keys[i]!);
      attempts[field] = w.count;
      const verdict = decideLoginAttempt(attempts, limits);
      if (!verdict.ok) {
        metrics.rateLimited("login");
        throw rateLimited(LOGIN_REFUSAL_MESSAGE[verdict.refusal], retryAfterSec(w.resetInMs));
      }
    }
    return counted;
  }

  /** Whether this account signed in from this network in the last 30 days. */
  async isKnown(address: string, source: string): Promise<boolean> {
    return (await this.rt.counters.add(`login-known:${address}|${source}`, 0, KNOWN_ADDRESS_MS)).count > 0;
  }

  /** A successful sign-in gives its counts back, and keeps the address known for 30 days after its last one. */
  async giveBack(counted: readonly string[], address: string, source: string): Promise<void> {
    const { config, counters } = this.rt;
    await Promise.all(counted.map((k) => counters.add(k, -1, config.loginFailureWindowMs)));
    await counters.mark(`login-known:${address}|${source}`, KNOWN_ADDRESS_MS);
  }

  /**
   * An account's second steps per day, from addresses it has not signed in from: the window's
   * limit alone lets a guesser with the password try about a thousand codes a day. Answers the
   * day's counter to give back on success (null from a known address), or refuses (429).
   */
  async countDailyStep(step: PendingStep, source: string, counted: readonly string[]): Promise<string | null> {
    const { config, counters, metrics } = this.rt;
    if (await this.isKnown(step.email, source)) return null;
    const daily = `login-2fa-day:${step.userId}`;
    const day = await counters.add(daily, 1, SECOND_STEP_DAY_MS);
    if (decideDailySecondSteps(day.count, config.loginMaxFailures)) return daily;
    await counters.add(daily, -1, SECOND_STEP_DAY_MS);
    await Promise.all(counted.map((k) => counters.add(k, -1, config.loginFailureWindowMs)));
    metrics.rateLimited("login");
    throw rateLimited(SECOND_STEP_DAY_REFUSAL, retryAfterSec(day.resetInMs));
  }

  /** A signed-in second step gives back its day's count (`countDailyStep`). */
  async giveBackDailyStep(daily: string | null): Promise<void> {
    if (daily) await this.rt.counters.add(daily, -1, SECOND_STEP_DAY_MS);
  }

  /**
   * Whether the answer of a second step is right, and (only after a right password) used up: a TOTP
   * code of a step after the last one used, an unused recovery code, or a security key's signature
   * over this step's challenge with a counter that moved on. Every kind of wrong answers false.
   */
  async secondFactorHolds(step: PendingStep, factors: SecondFactor[], p: SecondStepAnswer): Promise<boolean> {
    const given = [p.totpCode, p.recoveryCode, p.webauthn].filter((v) => v !== undefined).length;
    if (given !== 1) return false;
    if (p.totpCode !== undefined) return this.totpHolds(step, factors, p.totpCode);
    if (p.recoveryCode !== undefined) return this.recoveryCodeHolds(step, p.recoveryCode);
    return this.securityKeyHolds(step, factors, p.webauthn as unknown as AuthenticationResponseJSON);
  }

  // After a wrong password the same writes run, on ids that match nothing: neither the answer nor its time tells the two apart.

  private async totpHolds(step: PendingStep, factors: SecondFactor[], code: string): Promise<boolean> {
    const { sealer, clock, store } = this.rt;
    const factor = factors.find((f) => f.kind === "totp");
    const secret = factor?.sealedSecret === undefined ? null : sealer.open<string>(TOTP_SECRET_PURPOSE, factor.sealedSecret);
    if (!factor || secret === null) return false;
    let used: number;
    try {
      used = decideTotpStep(totpStep(secret, code, clock.nowMs()), factor.lastStep);
    } catch {
      return false;
    }
    const usedUp = await store.security.useTotpStep({
      factorId: step.pw === 1 ? factor.factorId : NOTHING,
      step: used,
      at: clock.timestamp(),
    });
    return step.pw === 1 && usedUp;
  }

  private async recoveryCodeHolds(step: PendingStep, code: string): Promise<boolean> {
    const userId = (step.pw === 1 ? step.userId : NOTHING) as UserId;
    const usedUp = await this.rt.store.security.useRecoveryCode({
      userId,
      codeHash: hashRecoveryCode(code),
      at: this.rt.clock.timestamp(),
    });
    return step.pw === 1 && usedUp;
  }

  private async securityKeyHolds(step: PendingStep, factors: SecondFactor[], response: AuthenticationResponseJSON): Promise<boolean> {
    const factor = factors.find((f) => f.kind === "webauthn" && f.credentialId === response?.id);
    if (!factor || step.challenge === undefined) return false;
    const counter = await verifyAuthentication(this.rp, step.challenge, response, factor);
    if (counter === null) return false;
    const factorId = step.pw === 1 ? factor.factorId : NOTHING;
    const usedUp = await this.rt.store.security.useWebauthnCounter({
      factorId,
      from: factor.counter ?? 0,
      to: counter,
      at: this.rt.clock.timestamp(),
    });
    return step.pw === 1 && usedUp;
  }
}
