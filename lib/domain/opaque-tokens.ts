/** Opaque secrets handed to clients (invite and refresh tokens): random, URL-safe, stored only as a hash. */
import { createHash, randomBytes } from "node:crypto";

/** 256 random bits, URL-safe text. */
export function newOpaqueToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Tokens are stored and looked up by this hash, never compared as plain text. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
