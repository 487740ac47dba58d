/** Sends: how large, how many per member, how much an organization keeps, and how long one may live. */
import { duration, int, onOff, setting } from "../parse";

export const SEND_SETTINGS = {
  sendsEnabled: setting({
    env: "SENDS",
    shown: "`on`; `off` where `REGISTRATION_MODE` is `open`",
    example: "on",
    group: "basics",
    meaning:
      "`on`: members may make sends (their organization's policy may still forbid them); `off`: nobody may, and links made before open nothing. Off by default on a server anyone may register on, which would otherwise host anyone's files under its name",
    parse: (raw, env) => onOff("SENDS", raw || (env.REGISTRATION_MODE === "open" ? "off" : "on")),
  }),
  sendMaxBytes: setting({
    env: "SEND_MAX_BYTES",
    default: String(100 * 1024 * 1024),
    unit: "bytes",
    group: "basics",
    meaning:
      "the most sealed bytes one send may hold (a file's plaintext and 28 bytes a MiB); a larger send is `413` before any part is sent",
    parse: (raw) => int("SEND_MAX_BYTES", raw, 1024, 2 ** 34),
  }),
  sendsPerUser: setting({
    env: "SEND_MAX_PER_USER",
    default: "100",
    group: "basics",
    meaning: "live sends one member may have, unfinished ones included; one more is `413`",
    parse: (raw) => int("SEND_MAX_PER_USER", raw, 1, 100_000),
  }),
  sendOrgQuotaBytes: setting({
    env: "SEND_ORG_QUOTA",
    default: String(2 * 1024 * 1024 * 1024),
    unit: "bytes",
    group: "basics",
    meaning:
      "sealed bytes the live sends of one organization may hold, each counted at its full size from its start; a send past it is `413`",
    parse: (raw) => int("SEND_ORG_QUOTA", raw, 0),
  }),
  sendMaxLifetimeMs: setting({
    env: "SEND_MAX_LIFETIME",
    default: "30d",
    group: "basics",
    meaning: "the longest a send may live (a week when its sender names none); an organization's `sendMaxLifetime` policy may cap it lower",
    parse: (raw) => duration("SEND_MAX_LIFETIME", raw),
  }),
  sendOpenRateLimit: setting({
    env: "SEND_OPEN_RATE_LIMIT",
    default: "60",
    group: "basics",
    meaning: "`POST /sends/:sendId/open` per client address per minute (a link's holder opens it once; a loop of opens is refused)",
    parse: (raw) => int("SEND_OPEN_RATE_LIMIT", raw, 1),
  }),
};
