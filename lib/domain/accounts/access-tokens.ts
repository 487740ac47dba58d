/**
 * What an access token must say besides carrying the server's signature (lib/auth/access-tokens.ts
 * checks the signature, issuer and audience). A token is accepted only if this server, as
 * configured now, could have issued it: it names a signing key the server holds, it was not issued
 * in the future, it lives no longer than ACCESS_TOKEN_TTL, and its user is still in the
 * organization, with the role, that it names. A signing key that leaked, or a token minted by a
 * bug, then buys no more than a token the server would issue itself.
 */
import type { OrgId } from "../ids";
import type { OrgRole } from "../types";
import {
  tokenClaimsStale,
  tokenFromTheFuture,
  tokenHolderRemoved,
  tokenKeyUnknown,
  tokenOutlivesItsLifetime,
  tokenUserGone,
} from "./refusals";

/**
 * How far a token's `iat` may lie ahead of this node's clock, in seconds: the clocks of a
 * deployment's nodes may differ by this much (one node issues, another verifies).
 */
export const MAX_CLOCK_SKEW_SEC = 60;

/** The key a token names (`kid` in its header), if this server holds it and it may still verify: the key, or a refusal. */
export function decideTokenKey(kid: unknown, usable: (kid: string) => boolean): string {
  if (typeof kid !== "string" || !usable(kid)) throw tokenKeyUnknown();
  return kid;
}

/** The token's issue and expiry times (seconds) against this node's clock and the lifetime the settings give a token. */
export function decideTokenTimes(token: { iat: number; exp: number }, nowSec: number, lifetimeSec: number): void {
  if (token.iat > nowSec + MAX_CLOCK_SKEW_SEC) throw tokenFromTheFuture();
  if (token.exp - token.iat > lifetimeSec) throw tokenOutlivesItsLifetime(lifetimeSec);
}

/** What the token check knows of the user a token names (null: no such user). */
export interface TokenHolder {
  orgId: OrgId;
  role: OrgRole;
  removedAt?: string;
}

/** The token's user exists, is still in its organization, and the organization and role it claims are theirs. */
export function decideTokenHolder(claims: { orgId: string; role: string }, holder: TokenHolder | null): void {
  if (holder === null) throw tokenUserGone();
  if (holder.removedAt !== undefined) throw tokenHolderRemoved();
  if (holder.orgId !== claims.orgId || holder.role !== claims.role) throw tokenClaimsStale();
}
