/** Signing keys, security keys, and the limits on sign-in attempts. */
import { duration, int, previousSigningKey, setting } from "../parse";

export const SIGN_IN_SETTINGS = {
  jwtSecret: setting({
    env: "JWT_SECRET",
    shown: "generated",
    group: "basics",
    meaning:
      "HS256 key, base64 of at least 32 bytes; tokens name it by a key id (`kid`); unset: generated under `DATA_DIR` (one process only)",
    parse: (raw) => raw || undefined,
  }),
  jwtPreviousSecret: setting({
    env: "JWT_PREVIOUS_SECRET",
    shown: "unset",
    group: "basics",
    meaning:
      'after a rotation: the key `JWT_SECRET` replaced; its tokens are accepted until `JWT_PREVIOUS_SECRET_UNTIL` (see "Operating it")',
    parse: (raw, env) => previousSigningKey(env, raw).secret,
  }),
  jwtPreviousSecretUntilMs: setting({
    env: "JWT_PREVIOUS_SECRET_UNTIL",
    shown: "unset",
    example: "2026-01-31T12:00:00Z",
    group: "basics",
    meaning: "the ISO 8601 time until which the previous key's tokens are accepted (required with `JWT_PREVIOUS_SECRET`, and only with it)",
    parse: (_raw, env) => previousSigningKey(env, env.JWT_PREVIOUS_SECRET).untilMs,
  }),
  sealSecret: setting({
    env: "SEAL_SECRET",
    shown: "generated",
    group: "basics",
    meaning:
      "key that seals second-factor secrets at rest (base64 of at least 32 bytes), the same on every node; unset: generated under `DATA_DIR`, or on a split deployment derived from `JWT_SECRET` (set it before rotating that)",
    parse: (raw) => raw || undefined,
  }),
  webauthnRpId: setting({
    env: "WEBAUTHN_RP_ID",
    default: "localhost",
    group: "basics",
    meaning: "the WebAuthn relying party id: the host name the web vault is served under (security keys and passkeys are bound to it)",
    parse: (raw) => raw,
  }),
  webauthnOrigins: setting({
    env: "WEBAUTHN_ORIGINS",
    shown: "any `http://localhost:<port>`",
    example: "https://vault.example.com",
    group: "basics",
    meaning:
      "the origins (comma-separated) a WebAuthn answer may come from: the web vault's, and `chrome-extension://<id>` for passkeys used from the browser extension; unset: http://localhost on any port (development only)",
    parse: (raw) =>
      raw
        ? raw
            .split(",")
            .map((o) => o.trim())
            .filter(Boolean)
        : undefined,
  }),
  loginMaxFailures: setting({
    env: "LOGIN_MAX_FAILURES",
    default: "10",
    group: "basics",
    meaning:
      "failed logins for one email from one client address within the window before `429` (strangers' failures never lock the owner out)",
    parse: (raw) => int("LOGIN_MAX_FAILURES", raw, 1),
  }),
  loginAddressMaxFailures: setting({
    env: "LOGIN_ADDRESS_MAX_FAILURES",
    default: "50",
    group: "basics",
    meaning: "failed logins from one client address, for any emails, within the window before `429` (password spraying)",
    parse: (raw) => int("LOGIN_ADDRESS_MAX_FAILURES", raw, 1),
  }),
  loginEmailMaxFailures: setting({
    env: "LOGIN_EMAIL_MAX_FAILURES",
    default: "100",
    group: "basics",
    meaning:
      "failed logins for one email from all addresses within the window; past it only addresses the account signed in from in the last 30 days may try",
    parse: (raw) => int("LOGIN_EMAIL_MAX_FAILURES", raw, 1),
  }),
  loginFailureWindowMs: setting({
    env: "LOGIN_FAILURE_WINDOW",
    default: "15m",
    group: "basics",
    meaning: "the window of the failed-login counters",
    parse: (raw) => duration("LOGIN_FAILURE_WINDOW", raw),
  }),
  preloginRateLimit: setting({
    env: "PRELOGIN_RATE_LIMIT",
    default: "600",
    group: "basics",
    meaning: "`GET /auth/prelogin` per client address per minute",
    parse: (raw) => int("PRELOGIN_RATE_LIMIT", raw, 1),
  }),
  registerRateLimit: setting({
    env: "REGISTER_RATE_LIMIT",
    default: "60",
    group: "basics",
    meaning: "`POST /auth/register` per client address per hour",
    parse: (raw) => int("REGISTER_RATE_LIMIT", raw, 1),
  }),
  redeemRateLimit: setting({
    env: "REDEEM_RATE_LIMIT",
    default: "60",
    group: "basics",
    meaning: "`POST /invites/redeem` per client address per minute",
    parse: (raw) => int("REDEEM_RATE_LIMIT", raw, 1),
  }),
  trustedProxies: setting({
    env: "TRUST_PROXY",
    default: "0",
    group: "basics",
    meaning:
      "proxies in front that append to `X-Forwarded-For`: the client address for rate limits is the entry that many places from the right (`1`: the rightmost, written by your proxy); `0`: the socket address. Entries further left are the client's own writing and are ignored",
    parse: (raw) => (raw === "true" ? 1 : raw === "false" ? 0 : int("TRUST_PROXY", raw, 0)),
  }),
};
