/** How large a vault and a rekey may be, and what a vault keeps of its past. */
import { DEFAULT_ITEM_HISTORY, MAX_ITEM_HISTORY } from "../../domain/items/history";
import { defaultVaultMaxBytes, defaultVaultMaxItems } from "../../domain/vaults/limits";
import { LogLevel, duration, int, oneOf, setting, valueOf } from "../parse";

/** The rekey's body limit: the vaults' limits default to what it can carry. */
const rekeyBodyLimitBytes = setting({
  env: "REKEY_BODY_LIMIT",
  default: String(64 * 1024 * 1024),
  unit: "bytes",
  group: "basics",
  meaning: "body limit of the rekey route, bytes (all other routes: 1 MiB)",
  parse: (raw) => int("REKEY_BODY_LIMIT", raw, 1024 * 1024, 256 * 1024 * 1024),
});

export const VAULT_SETTINGS = {
  rekeyBodyLimitBytes,
  rekeyConcurrency: setting({
    env: "REKEY_CONCURRENCY",
    default: "4",
    group: "basics",
    meaning:
      "rekey bodies read and held at once per process (an organization holds at most half, a user a quarter); past a share a request waits its turn up to 2 s (a quarter of `REQUEST_TIMEOUT` when that is less), then is answered `429` (a caller's or organization's share) or `503` (the process's), with `Retry-After: 1`; a body still arriving after two thirds of `REQUEST_TIMEOUT` gives way to another organization waiting (`408`)",
    parse: (raw) => int("REKEY_CONCURRENCY", raw, 1, 1024),
  }),
  vaultMaxBytes: setting({
    env: "VAULT_MAX_BYTES",
    shown: "half of `REKEY_BODY_LIMIT`",
    group: "basics",
    meaning:
      "ciphertext one vault may hold (its items', trash's and history's `encryptedData` and `encryptedName`, as base64 characters); a write past it is `413` (history gives way first). Bounded so that a full vault can always be rekeyed",
    parse: (raw, env): number => (raw ? int("VAULT_MAX_BYTES", raw, 1024) : defaultVaultMaxBytes(valueOf(rekeyBodyLimitBytes, env))),
  }),
  vaultMaxItems: setting({
    env: "VAULT_MAX_ITEMS",
    shown: `${defaultVaultMaxItems(valueOf(rekeyBodyLimitBytes, {}))} (fewer below a ${rekeyBodyLimitBytes.shown} \`REKEY_BODY_LIMIT\`)`,
    group: "basics",
    meaning: "items one vault may hold, its trash included; one more is `413` (kept revisions count too, and give way)",
    parse: (raw, env): number => (raw ? int("VAULT_MAX_ITEMS", raw, 1) : defaultVaultMaxItems(valueOf(rekeyBodyLimitBytes, env))),
  }),
  itemHistory: setting({
    env: "ITEM_HISTORY",
    default: String(DEFAULT_ITEM_HISTORY),
    group: "basics",
    meaning: "revisions kept per item (0: none); the oldest give way first, and whenever a vault needs the room for its items and trash",
    parse: (raw) => int("ITEM_HISTORY", raw, 0, MAX_ITEM_HISTORY),
  }),
  trashRetentionMs: setting({
    env: "TRASH_RETENTION",
    default: "30d",
    group: "basics",
    meaning: "how long a deleted item stays in its vault's trash, where members can restore it, before the sweeper purges it",
    parse: (raw) => duration("TRASH_RETENTION", raw),
  }),
  answerMemoryLimitBytes: setting({
    env: "ANSWER_MEMORY_LIMIT",
    default: String(128 * 1024 * 1024),
    unit: "bytes",
    group: "basics",
    meaning:
      "bytes of answers a gateway holds until their clients have taken them (a chunk's and a part's aside: `ATTACHMENT_CONCURRENCY`): an organization's at most half, a user's (or a public route's address's) a quarter, though one holding none may take any answer the process has room for; past a share an answer is `429`, past the process's limit `503`, with `Retry-After: 1`, unless answers held for a third of `REQUEST_TIMEOUT` by organizations holding more can be closed to make room. An answer not taken within `REQUEST_TIMEOUT` (a large one: at 32 KiB/s) has its connection closed",
    parse: (raw) => int("ANSWER_MEMORY_LIMIT", raw, 1024 * 1024),
  }),
  requestTimeoutMs: setting({
    env: "REQUEST_TIMEOUT",
    default: "30000",
    group: "basics",
    meaning:
      "ms, for every call between services, and for an HTTP request's headers and body to arrive; a connection with a request in progress on which nothing moves for this and 2 s more (an answer its client does not read) is closed",
    parse: (raw) => int("REQUEST_TIMEOUT", raw, 1000),
  }),
  logLevel: setting({
    env: "LOG_LEVEL",
    default: "info",
    group: "basics",
    meaning: "Moleculer log level",
    parse: (raw): LogLevel => oneOf("LOG_LEVEL", raw, ["fatal", "error", "warn", "info", "debug", "trace"] as const),
  }),
};
