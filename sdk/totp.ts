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

/** Parses a seed; throws an Error saying what is wrong with it. */
export function parseTotp(seed: string): TOTP {
  const text = seed.trim();
  if (/^otpauth:/i.test(text)) {
    const parsed = URI.parse(text);
    if (!(parsed instanceof TOTP)) throw new Error("the otpauth address is not a TOTP one (otpauth://totp/...)");
    return parsed;
  }
  const secret = text.replace(/[\s-]/g, "").toUpperCase().replace(/=+$/, "");
  if (!/^[A-Z2-7]{16,}$/.test(secret)) throw new Error("a TOTP secret is base32 (letters A-Z and digits 2-7), at least 16 of them");
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
