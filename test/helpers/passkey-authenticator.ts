/**
 * A passkey authenticator for SDK tests of passkey sign-in (sdk/client/passkey-logins.ts): the
 * SDK's own WebAuthn authenticator (sdk/passkeys/authenticator.ts: real ES256 keys, user verified,
 * counters) with the PRF extension computed as CTAP's hmac-secret does it: HMAC-SHA-256 of a
 * per-credential random secret over SHA-256("WebAuthn PRF" || 0x00 || salt). Chromium's virtual
 * authenticator covers the browser (test/clients/web-passkey-unlock.test.ts).
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { assertPasskey, createPasskey, passkeysFor } from "../../sdk/passkeys/authenticator";
import type { Passkey } from "../../sdk/passkeys/passkey";
import type { PasskeyAuthenticator } from "../../sdk";
import type { Bytes } from "../../protocol/encoding";

const fromB64url = (s: unknown) => new Uint8Array(Buffer.from(String(s), "base64url"));
const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");

export class TestPasskeyAuthenticator implements PasskeyAuthenticator {
  readonly passkeys: Passkey[] = [];
  private readonly secrets = new Map<string, Buffer>();
  /** The PRF outputs this authenticator gave, to look for where they must never be. */
  readonly prfOutputs: Bytes[] = [];

  constructor(
    readonly opts: {
      origin?: string;
      /** Whether it answers the PRF at all (a passkey without it signs in, and the password unlocks). */
      prf?: boolean;
      /** Whether it answers the PRF at creation too (some answer it only at sign-in). */
      prfAtCreate?: boolean;
    } = {},
  ) {}

  get origin(): string {
    return this.opts.origin ?? "http://localhost";
  }

  private prfOf(credentialId: string, salt: Uint8Array): Bytes | undefined {
    if (this.opts.prf === false) return undefined;
    const input = createHash("sha256")
      .update(Buffer.concat([Buffer.from("WebAuthn PRF"), Buffer.from([0]), salt]))
      .digest();
    const out = new Uint8Array(createHmac("sha256", this.secrets.get(credentialId)!).update(input).digest());
    this.prfOutputs.push(out);
    return out;
  }

  private results(prf: Bytes | undefined) {
    return prf ? { prf: { enabled: true, results: { first: b64url(prf) } } } : {};
  }

  async create(options: Record<string, any>, salt: Uint8Array) {
    const { passkey, registration } = await createPasskey(
      {
        origin: this.origin,
        rp: options.rp,
        user: { id: fromB64url(options.user.id), name: options.user.name, displayName: options.user.displayName ?? options.user.name },
        challenge: fromB64url(options.challenge),
        pubKeyCredParams: options.pubKeyCredParams,
        excludeCredentials: (options.excludeCredentials ?? []).map((c: { id: string }) => ({ id: fromB64url(c.id) })),
        residentKey: options.authenticatorSelection?.residentKey,
      },
      this.passkeys,
    );
    this.passkeys.push(passkey);
    this.secrets.set(passkey.credentialId, randomBytes(32));
    const prf = this.opts.prfAtCreate === false ? undefined : this.prfOf(passkey.credentialId, salt);
    return { response: { ...registration, clientExtensionResults: this.results(prf) } as Record<string, unknown>, ...(prf && { prf }) };
  }

  async get(options: Record<string, any>, salt: Uint8Array) {
    const request = {
      origin: this.origin,
      rpId: options.rpId,
      challenge: fromB64url(options.challenge),
      allowCredentials: (options.allowCredentials ?? []).map((c: { id: string }) => ({ id: fromB64url(c.id) })),
    };
    const [passkey] = passkeysFor(request, this.passkeys);
    if (!passkey) throw new Error("NotAllowedError: no passkey for this request");
    const { assertion, counter } = await assertPasskey(request, passkey);
    passkey.counter = counter;
    const prf = this.prfOf(passkey.credentialId, salt);
    return { response: { ...assertion, clientExtensionResults: this.results(prf) } as Record<string, unknown>, ...(prf && { prf }) };
  }
}
