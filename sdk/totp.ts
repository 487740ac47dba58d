/**
 * TOTP codes (RFC 6238) for a login's seed, through `otpauth`: the seed is an `otpauth://totp/...`
 * URI (as a site's QR code holds it: secret, algorithm, digits, period) or a bare base32 secret
 * (SHA-1, 6 digits, 30 s), spaces and case as people copy them.
 */
import { Secret, TOTP, URI } from "otpauth";

export interface TotpCode {
  code: string;
  /** Seconds until the next code. */
  remaining: number;
  period: number;
}

/** What a seed may ask for: codes of 6 to 10 digits, every 1 to 300 seconds, from a secret of at most 128 bytes (a seed from a file cannot make a client build huge codes). */
export const TOTP_BOUNDS = { digits: [6, 10], period: [1, 300], secretBytes: 128, seedChars: 2048 } as const;

/** Parses a seed; throws an Error saying what is wrong with it. */
export function parseTotp(seed: string): TOTP {
  const text = seed.trim();
  if (text.length > TOTP_BOUNDS.seedChars) throw new Error(`a TOTP seed is at most ${TOTP_BOUNDS.seedChars} characters`);
  if (/^otpauth:/i.test(text)) {
    const parsed = URI.parse(text);
    if (!(parsed instanceof TOTP)) throw new Error("the otpauth address is not a TOTP one (otpauth://totp/...)");
    const [dMin, dMax] = TOTP_BOUNDS.digits;
    const [pMin, pMax] = TOTP_BOUNDS.period;
    if (parsed.digits < dMin || parsed.digits > dMax) throw new Error(`a TOTP code has ${dMin} to ${dMax} digits, not ${parsed.digits}`);
    if (parsed.period < pMin || parsed.period > pMax) throw new Error(`a TOTP period is ${pMin} to ${pMax} seconds, not ${parsed.period}`);
    if (parsed.secret.bytes.length > TOTP_BOUNDS.secretBytes) throw new Error(`a TOTP secret is at most ${TOTP_BOUNDS.secretBytes} bytes`);
    return parsed;
  }
  const secret = text.replace(/[\s-]/g, "").toUpperCase().replace(/=+$/, "");
  if (!/^[A-Z2-7]{16,}$/.test(secret)) throw new Error("a TOTP secret is base32 (letters A-Z and digits 2-7), at least 16 of them");
  if (secret.length > (TOTP_BOUNDS.secretBytes * 8) / 5) throw new Error(`a TOTP secret is at most ${TOTP_BOUNDS.secretBytes} bytes`);
  return new TOTP({ secret: Secret.fromBase32(secret) });
}

/** Whether a seed parses (for a form to say so before saving). */
export function totpProblem(seed: string): string | undefined {
  try {
    parseTotp(seed);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The code at `now` (ms) and how long it lasts. */
export function totpCode(seed: string, now: number = Date.now()): TotpCode {
  const totp = parseTotp(seed);
  const code = totp.generate({ timestamp: now });
  const period = totp.period;
  const remaining = period - (Math.floor(now / 1000) % period);
  return { code, remaining, period };
}
