/** Files on items: how large, how many, how much an organization keeps, and how long an upload may take. */
import { duration, int, setting } from "../parse";

export const ATTACHMENT_SETTINGS = {
  attachmentMaxBytes: setting({
    env: "ATTACHMENT_MAX_BYTES",
    default: String(256 * 1024 * 1024),
    unit: "bytes",
    group: "basics",
    meaning: "the largest file one attachment may hold (its plaintext size); a larger upload is `413` before any chunk is sent",
    parse: (raw) => int("ATTACHMENT_MAX_BYTES", raw, 0, 2 ** 40),
  }),
  attachmentsPerItem: setting({
    env: "ATTACHMENTS_PER_ITEM",
    default: "50",
    group: "basics",
    meaning: "attachments one item may have, uploads in progress included; one more is `413`",
    parse: (raw) => int("ATTACHMENTS_PER_ITEM", raw, 1, 10_000),
  }),
  attachmentOrgQuotaBytes: setting({
    env: "ATTACHMENT_ORG_QUOTA",
    default: String(10 * 1024 * 1024 * 1024),
    unit: "bytes",
    group: "basics",
    meaning:
      "sealed bytes the attachments of one organization may hold, uploads in progress counted at their full size from their start; an upload past it is `413`",
    parse: (raw) => int("ATTACHMENT_ORG_QUOTA", raw, 0),
  }),
  attachmentUploadWindowMs: setting({
    env: "ATTACHMENT_UPLOAD_WINDOW",
    default: "24h",
    group: "basics",
    meaning: "how long an upload may stay unfinished (a broken one is resumed within it); the sweeper then deletes it and frees its room",
    parse: (raw) => duration("ATTACHMENT_UPLOAD_WINDOW", raw),
  }),
  attachmentConcurrency: setting({
    env: "ATTACHMENT_CONCURRENCY",
    default: "8",
    group: "basics",
    meaning:
      "attachment chunks (1 MiB each) written at once per process, and as many read, shared fairly as rekey bodies are; past a share a request waits its turn, then is `429` or `503` with `Retry-After: 1`; an upload's body still arriving after a third of `REQUEST_TIMEOUT` gives way to another organization waiting (`408`)",
    parse: (raw) => int("ATTACHMENT_CONCURRENCY", raw, 1, 1024),
  }),
};
