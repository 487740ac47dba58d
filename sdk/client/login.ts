/**
 * What a login answers and asks, shared by the session (the first step), the second factors (the
 * second step) and the recovery (a recovered login): the server's shapes and the prompt's.
 */
import type { Tokens } from "../http";
import type { KdfParams } from "../../protocol/crypto/primitives";
import type { SignedStatement } from "../../protocol/formats/statements";
import type { OrgRole } from "./types";

export interface LoginAnswer extends Tokens {
  userId: string;
  orgId: string;
  role: OrgRole;
  kdf: KdfParams;
  publicKey: string;
  signingPublicKey: string;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
  keyStatement?: SignedStatement;
  kdfStatement?: SignedStatement;
  accountVersion: number;
  /** The account's key log, when it rotated its keys (protocol/formats/key-log.ts). */
  keyLog?: unknown;
  /** The organization requires a second factor and this account has none: this login may only enrol one. */
  enrolOnly?: true;
  /** Answered to a second step sent with `rememberDevice`: skips the second step at this device's next logins. */
  deviceToken?: string;
}

export type FactorMethod = "totp" | "webauthn" | "recovery-code";

/** The first step's answer for an account with a second factor: the step to answer next. */
export interface LoginStep {
  secondFactorRequired: true;
  stepToken: string;
  methods: FactorMethod[];
  webauthn?: Record<string, unknown>;
}

/** What a second step asks: the methods the account has, and a WebAuthn challenge when it has a security key. */
export interface SecondFactorChallenge {
  methods: FactorMethod[];
  /** PublicKeyCredentialRequestOptionsJSON, for `navigator.credentials.get` (e.g. @simplewebauthn/browser's startAuthentication). */
  webauthn?: Record<string, unknown>;
  /** Set when the answer before was not right: ask again. */
  retry?: boolean;
}

/** With `rememberDevice`, the server answers a token this device keeps (`VaultClientOptions.deviceTokens`) to skip the second step for 30 days. */
export type SecondFactorAnswer = ({ totpCode: string } | { recoveryCode: string } | { webauthn: unknown }) & { rememberDevice?: boolean };

/** A device token as the server makes them: 32 random bytes, base64url. Anything else is not kept. */
export const isDeviceToken = (value: unknown): value is string => typeof value === "string" && /^[A-Za-z0-9_-]{43}$/.test(value);
export type SecondFactorPrompt = (challenge: SecondFactorChallenge) => Promise<SecondFactorAnswer>;
