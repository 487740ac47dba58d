/** Sends: how large, how many per member, how much an organization keeps, and how long one may live. */
import { duration, int, setting } from "../parse";

export const SEND_SETTINGS = {
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
};
