/**
 * A login kept on a device between visits, locked: the account as the login verified it (its
 * wrapped private keys, KDF parameters, email and id: nothing there opens without the master
 * password) and the session's tokens SEALED under a key only the master password recovers:
 * HKDF-SHA256 of the stretched key (the key that opens the private keys), with the kept session's
 * context string as its info, AES-256-GCM with the context and the account's id as associated data.
 * Guessing the password from what is kept costs the account's KDF per guess, as from the wrapped
 * keys the server holds anyway.
 *
 * `resumeKept` builds a client from it with the password: the keys opened and checked as an unlock
 * checks them (`Session.unlock`: the remembered KDF parameters, the pinned keys), then the seal
 * opened, then the SAME session refreshed. Nothing the server answers goes into what is kept but
 * the rotated tokens, which the caller seals again (`sealKept`).
 */
import { hkdfSha256, gcmDecrypt, gcmEncrypt } from "../../protocol/crypto/primitives";
import { fromBase64, fromUtf8, toBase64, utf8, type Bytes } from "../../protocol/encoding";
import { SecurityError } from "../errors";
import type { Tokens } from "../http";
import type { Account } from "./types";

/** The context the web vault seals its kept session under (another client takes its own). */
export const WEB_SESSION_SEAL_CONTEXT = "web-session-seal-v1";

/**
 * The context of the web vault's offline copy (what it last read, sealed in IndexedDB): its own
 * key, HKDF of the same stretched key with this info, so the session seal's key opens nothing of it
 * and the other way round.
 */
export const WEB_OFFLINE_CACHE_CONTEXT = "web-offline-cache-v1";

/**
 * The context of the edits the web vault made offline and keeps until the server saves them
 * (sealed in IndexedDB beside the copy): a key of their own, from the same stretched key, so that
 * neither record's seal opens as the other.
 */
export const WEB_OFFLINE_EDITS_CONTEXT = "web-offline-edits-v1";

export interface KeptSession {
  version: 1;
  /** The context string the tokens are sealed under (bound into the key and the associated data). */
  context: string;
  account: Account;
  /** base64 of `iv || ciphertext || tag` over the JSON of the token pair. */
  sealedTokens: string;
}

/** The key that seals a kept session's tokens: raw bytes, held in memory only while the page lives. */
export type SealKey = Bytes;

const associatedData = (context: string, userId: string): Bytes => utf8(`${context}\u0000${userId}`);

export function sealKeyFor(stretchedKey: Bytes, context: string): Promise<SealKey> {
  return hkdfSha256(stretchedKey, new Uint8Array(0), utf8(context), 32);
}

export async function sealKept(key: SealKey, context: string, account: Account, tokens: Tokens): Promise<KeptSession> {
  const pair: Tokens = { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
  const sealed = await gcmEncrypt(key, utf8(JSON.stringify(pair)), associatedData(context, account.userId));
  return { version: 1, context, account, sealedTokens: toBase64(sealed) };
}

/** The tokens of a kept session; a seal that does not open (altered, or another account's) is refused. */
export async function openKept(key: SealKey, kept: KeptSession): Promise<Tokens> {
  let plain: Bytes;
  try {
    plain = await gcmDecrypt(key, fromBase64(kept.sealedTokens), associatedData(kept.context, kept.account.userId));
  } catch {
    throw new SecurityError("INCONSISTENT", "the session this browser kept does not open with this account's key: it was altered");
  }
  const pair = JSON.parse(fromUtf8(plain)) as Partial<Tokens>;
  if (typeof pair.accessToken !== "string" || typeof pair.refreshToken !== "string")
    throw new SecurityError("INCONSISTENT", "the session this browser kept holds no token pair");
  return { accessToken: pair.accessToken, refreshToken: pair.refreshToken };
}

/**
 * Any JSON value sealed under `key` (`sealKeyFor(stretchedKey, context)`) for the account `userId`:
 * base64 of `iv || ciphertext || tag`, the context and the account's id as associated data.
 */
export async function sealValue(key: SealKey, context: string, userId: string, value: unknown): Promise<string> {
  return toBase64(await gcmEncrypt(key, utf8(JSON.stringify(value)), associatedData(context, userId)));
}

/** A value `sealValue` sealed; one that does not open (altered, another account's, another context's) is refused. */
export async function openValue(key: SealKey, context: string, userId: string, sealed: string): Promise<unknown> {
  try {
    return JSON.parse(fromUtf8(await gcmDecrypt(key, fromBase64(sealed), associatedData(context, userId)))) as unknown;
  } catch {
    throw new SecurityError("INCONSISTENT", "what this browser kept does not open with this account's key: it was altered");
  }
}

/** Whether a value read back from storage has the kept session's shape (else it is ignored, as if absent). */
export function isKeptSession(value: unknown): value is KeptSession {
  const v = value as Partial<KeptSession> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    v.version === 1 &&
    typeof v.context === "string" &&
    typeof v.sealedTokens === "string" &&
    typeof v.account === "object" &&
    v.account !== null &&
    typeof v.account.userId === "string" &&
    typeof v.account.email === "string"
  );
}
