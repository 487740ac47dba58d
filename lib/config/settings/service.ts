/** The service: where it listens and keeps its data, who may register, token lifetimes. */
import path from "node:path";
import { MAX_INVITE_TTL_MS } from "../../domain/orgs/invites";
import { RegistrationMode, duration, int, oneOf, projectRoot, setting } from "../parse";

/** Where `npm run build` puts the web vault, from the project's root. */
const WEB_DIR = "dist/web";

export const SERVICE_SETTINGS = {
  port: setting({
    env: "PORT",
    default: "3000",
    group: "basics",
    meaning: "HTTP port of the gateway",
    parse: (raw) => int("PORT", raw, 0, 65535),
  }),
  host: setting({
    env: "HOST",
    default: "127.0.0.1",
    group: "basics",
    meaning: "interface the gateway listens on",
    parse: (raw) => raw,
  }),
  dataDir: setting({
    env: "DATA_DIR",
    default: "./data",
    group: "basics",
    meaning:
      "the embedded store and the generated keys (`jwt-secret`, `seal-secret`, mode 0600); made owner-only where missing. A path the server cannot write fails the start in one line",
    parse: (raw) => path.resolve(raw),
  }),
  webDir: setting({
    env: "WEB_DIR",
    shown: `\`${WEB_DIR}\``,
    group: "basics",
    meaning: "the built web vault, served under `/` (`npm run build` makes it; absent: the API alone)",
    parse: (raw) => (raw ? path.resolve(raw) : path.join(projectRoot(), WEB_DIR)),
  }),
  registrationMode: setting({
    env: "REGISTRATION_MODE",
    default: "invite",
    group: "basics",
    meaning:
      "`invite`: new users need an invite, except the very first one; `open`: anyone may register and gets a new organization; `disabled`: nobody may",
    parse: (raw): RegistrationMode => oneOf("REGISTRATION_MODE", raw, ["invite", "open", "disabled"] as const),
  }),
  inviteTtlMs: setting({
    env: "INVITE_TTL",
    default: "72h",
    group: "basics",
    meaning: "default invite lifetime (`<n><s|m|h|d>`, 1s to 30d)",
    parse: (raw) => {
      const ms = duration("INVITE_TTL", raw);
      if (ms < 1000 || ms > MAX_INVITE_TTL_MS) throw new Error(`Setting INVITE_TTL must be from 1s to 30d, got "${raw}"`);
      return ms;
    },
  }),
  accessTokenTtlSec: setting({
    env: "ACCESS_TOKEN_TTL",
    default: "15m",
    group: "basics",
    meaning: "access-token (JWT) lifetime",
    parse: (raw) => Math.floor(duration("ACCESS_TOKEN_TTL", raw) / 1000),
  }),
  refreshTokenTtlMs: setting({
    env: "REFRESH_TOKEN_TTL",
    default: "30d",
    group: "basics",
    meaning: "refresh-token lifetime",
    parse: (raw) => duration("REFRESH_TOKEN_TTL", raw),
  }),
  sessionCheckIntervalMs: setting({
    env: "SESSION_CHECK_INTERVAL",
    default: "5s",
    group: "basics",
    meaning:
      "the longest an ended session's access tokens still work, or a session narrowed to enrolling a second factor keeps its full rights, on a gateway that did not hear of the change (`0s` to `1m`; `0s`: every request reads the session)",
    parse: (raw) => {
      const ms = raw === "0s" || raw === "0" ? 0 : duration("SESSION_CHECK_INTERVAL", raw);
      if (ms > 60_000) throw new Error(`Setting SESSION_CHECK_INTERVAL must be from 0s to 1m, got "${raw}"`);
      return ms;
    },
  }),
};
