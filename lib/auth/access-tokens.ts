/**
 * Access tokens: HS256 JWTs signed by the server with jose. Verified results are cached by the
 * exact token string until the token expires: verification, not routing, dominates an
 * authenticated request (../shared/notes/ceilings.md).
 *
 * Key rotation: every token names its key (`kid`, derived from the key). After JWT_SECRET changes,
 * tokens signed with the previous key (JWT_PREVIOUS_SECRET) are still accepted until
 * JWT_PREVIOUS_SECRET_UNTIL, so nobody is logged out by a rotation; after it, they are refused.
 *
 * A signature alone is not enough (lib/domain/accounts/access-tokens.ts): a token must name its key,
 * must not come from the future nor outlive ACCESS_TOKEN_TTL, and its user must still be in the
 * organization, with the role, it names (read once per token, when it is first verified).
 */
import { createHash, randomUUID } from "node:crypto";
import { SignJWT, decodeProtectedHeader, jwtVerify } from "./jose";
import { unauthorized } from "../errors";
import { decideTokenHolder, decideTokenKey, decideTokenTimes, type TokenHolder } from "../domain/accounts/access-tokens";
import type { OrgId, UserId } from "../domain/ids";
import { ORG_ROLES, type Caller, type OrgRole } from "../domain/types";

export const ISSUER = "vault-service";
export const AUDIENCE = "vault-service-api";
const CACHE_LIMIT = 10_000;

/** The user a token names, as the store has them now (null: none). */
export type HolderLookup = (userId: UserId) => Promise<TokenHolder | null>;

/** The signing keys: the current one signs and verifies; a previous one verifies until its deadline. */
export interface SigningKeys {
  current: Uint8Array;
  previous?: { secret: Uint8Array; untilMs: number };
}

/** A key's id: public, stable, and not the key (a truncated SHA-256 under a label). */
export function keyId(secret: Uint8Array): string {
  return createHash("sha256").update("vault-service jwt kid\0").update(secret).digest("base64url").slice(0, 16);
}

export class AccessTokens {
  private readonly verified = new Map<string, { caller: Caller; expMs: number; kid: string }>();
  private readonly currentKid: string;
  private readonly previousKid: string | undefined;

  constructor(
    private readonly keys: SigningKeys,
    private readonly ttlSec: number,
    private readonly now: () => number = Date.now,
    /** Where the token's user is looked up; without it (the benchmark's baseline), the claims are taken as signed. */
    private readonly holderOf?: HolderLookup,
  ) {
    this.currentKid = keyId(keys.current);
    this.previousKid = keys.previous ? keyId(keys.previous.secret) : undefined;
  }

  /** The key id new tokens carry. */
  get kid(): string {
    return this.currentKid;
  }

  get lifetimeSec(): number {
    return this.ttlSec;
  }

  async issue(caller: Caller): Promise<string> {
    const issuedAt = Math.floor(this.now() / 1000);
    return new SignJWT({
      org: caller.orgId,
      role: caller.role,
      ...(caller.sessionId !== undefined && { sid: caller.sessionId }),
      ...(caller.enrolOnly && { enr: true }),
      ...(caller.readOnly && { ro: true }),
    })
      .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: this.currentKid })
      .setSubject(caller.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.ttlSec)
      .setJti(randomUUID())
      .sign(this.keys.current);
  }

  /** The caller a token names, or `401 UNAUTHORIZED` for a missing, malformed, expired or forged one. */
  async verify(token: string): Promise<Caller> {
    const now = this.now();
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.expMs > now && this.usable(hit.kid, now)) return hit.caller;
      this.verified.delete(token);
    }
    const kid = decideTokenKey(this.kidOf(token), (k) => this.usable(k, now));
    const secret = kid === this.currentKid ? this.keys.current : this.keys.previous!.secret;
    let payload;
    try {
      ({ payload } = await jwtVerify(token, secret, {
        algorithms: ["HS256"],
        issuer: ISSUER,
        audience: AUDIENCE,
        requiredClaims: ["sub", "iat", "exp", "jti"],
        currentDate: new Date(now),
      }));
    } catch {
      throw unauthorized("Invalid or expired access token");
    }
    const { sub, org, role, iat, exp, sid, enr, ro } = payload;
    if (
      typeof sub !== "string" ||
      typeof org !== "string" ||
      !ORG_ROLES.includes(role as OrgRole) ||
      typeof iat !== "number" ||
      typeof exp !== "number" ||
      (sid !== undefined && typeof sid !== "string") ||
      (enr !== undefined && enr !== true) ||
      (ro !== undefined && ro !== true)
    ) {
      throw unauthorized("Invalid access token");
    }
    decideTokenTimes({ iat, exp }, Math.floor(now / 1000), this.ttlSec);
    if (this.holderOf) decideTokenHolder({ orgId: org, role: role as string }, await this.holderOf(sub as UserId));
    // Claims of a token this server signed: its ids. A token from before sessions names none.
    const caller: Caller = {
      userId: sub as UserId,
      orgId: org as OrgId,
      role: role as OrgRole,
      ...(sid !== undefined && { sessionId: sid }),
      ...(enr === true && { enrolOnly: true as const }),
      ...(ro === true && { readOnly: true as const }),
    };
    if (this.verified.size >= CACHE_LIMIT) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { caller, expMs: exp * 1000, kid });
    return caller;
  }

  /** The key id the token's header names (undefined: none, or no readable header). */
  private kidOf(token: string): unknown {
    try {
      return decodeProtectedHeader(token).kid;
    } catch {
      return undefined;
    }
  }

  /** The current key always; the previous one until its deadline. */
  private usable(kid: string, now: number): boolean {
    return kid === this.currentKid || (kid === this.previousKid && now < this.keys.previous!.untilMs);
  }
}
