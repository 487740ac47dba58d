/**
 * A KeePass entry's one-time code seed, where each program keeps it, as an `otpauth://` address:
 *
 * - KeePassXC and KeeWeb: `otp`, an otpauth address already;
 * - KeePassXC's older form and the KeeTrayTOTP plugin: `TOTP Seed` (base32, spaces allowed) with
 *   `TOTP Settings` "period;digits" ("30;6"), where "period;S" is a Steam code (not carried: this
 *   service's codes are the standard ones);
 * - KeePass 2.47 and later: `TimeOtp-Secret-Base32` with `TimeOtp-Length`, `TimeOtp-Period` and
 *   `TimeOtp-Algorithm` (HMAC-SHA-1, -256, -512).
 *
 * Answers the fields it used (not to be kept again as custom fields) and what it left out.
 */
import type { LeftOut } from "./types";

const ALGORITHMS: Record<string, string> = { "HMAC-SHA-1": "SHA1", "HMAC-SHA-256": "SHA256", "HMAC-SHA-512": "SHA512" };

/** The seed: a bare base32 secret at the usual settings (SHA-1, 6 digits, 30 s), else an otpauth address labelled `label`. */
function seedOf(label: string, base32: string, digits: string, period: string, algorithm = "SHA1"): string {
  const secret = base32.replace(/\s+/g, "").toUpperCase();
  if (digits === "6" && period === "30" && algorithm === "SHA1") return secret;
  const query = new URLSearchParams({ secret, digits, period, algorithm });
  return `otpauth://totp/${encodeURIComponent(label || "KeePass")}?${query.toString()}`;
}

export function keepassTotp(get: (field: string) => string): { totp?: string; used: string[]; left: LeftOut[] } {
  if (get("otp")) return { totp: get("otp"), used: ["otp"], left: [] };
  if (get("TOTP Seed")) {
    const used = ["TOTP Seed", "TOTP Settings"];
    const [period = "30", digits = "6"] = (get("TOTP Settings") || "30;6").split(";").map((p) => p.trim());
    if (digits.toUpperCase() === "S")
      return { used, left: [{ part: "Steam one-time code", why: "Steam's codes are not the standard ones this service makes" }] };
    return { totp: seedOf(get("Title"), get("TOTP Seed"), digits, period), used, left: [] };
  }
  if (get("TimeOtp-Secret-Base32")) {
    const used = ["TimeOtp-Secret-Base32", "TimeOtp-Length", "TimeOtp-Period", "TimeOtp-Algorithm"];
    const algorithm = ALGORITHMS[get("TimeOtp-Algorithm") || "HMAC-SHA-1"];
    if (!algorithm)
      return {
        used: [],
        left: [{ part: "one-time code", why: `an algorithm this service does not make codes with (${get("TimeOtp-Algorithm")})` }],
      };
    const [digits, period] = [get("TimeOtp-Length") || "6", get("TimeOtp-Period") || "30"];
    return { totp: seedOf(get("Title"), get("TimeOtp-Secret-Base32"), digits, period, algorithm), used, left: [] };
  }
  return { used: [], left: [] };
}
