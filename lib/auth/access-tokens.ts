/**
 * Access tokens: HS256 JWTs signed by the server with jose. Verified results are cached by the
 * exact token string until the token expires: verification, not routing, dominates an
 * authenticated request (../shared/notes/ceilings.md).
 *
 * Key rotation: every token names its key (`kid`, derived from the key). After JWT_SECRET changes,
 * tokens signed with the previous key (JWT_PREVIOUS_SECRET) are still accepted until
 * JWT_PREVIOUS_SECRET_UNTIL, so nobody is logged out by a rotation; after it, they are refused.
 */
import { createHash, randomUUID } from "node:crypto";
import { SignJWT, decodeProtectedHeader, jwtVerify } from "./jose";
import { unauthorized } from "../errors";
import type { OrgId, UserId } from "../domain/ids";
import { ORG_ROLES, type Caller, type OrgRole } from "../domain/types";

export const ISSUER = "vault-service";
export const AUDIENCE = "vault-service-api";
const CACHE_LIMIT = 10_000;

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
    const kid = this.kidOf(token);
    if (kid === undefined || !this.usable(kid, now)) throw unauthorized("Invalid or expired access token");
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
    const { sub, org, role, exp, sid, enr } = payload;
    if (
      typeof sub !== "string" ||
      typeof org !== "string" ||
      !ORG_ROLES.includes(role as OrgRole) ||
      typeof exp !== "number" ||
      (sid !== undefined && typeof sid !== "string") ||
      (enr !== undefined && enr !== true)
    ) {
      throw unauthorized("Invalid access token");
    }
    // Claims of a token this server signed: its ids. A token from before sessions names none.
    const caller: Caller = {
      userId: sub as UserId,
      orgId: org as OrgId,
      role: role as OrgRole,
      ...(sid !== undefined && { sessionId: sid }),
      ...(enr === true && { enrolOnly: true as const }),
    };
    if (this.verified.size >= CACHE_LIMIT) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { caller, expMs: exp * 1000, kid });
    return caller;
  }

  /** The token's key id; a token from before key ids were issued was signed with the current key. */
  private kidOf(token: string): string | undefined {
    try {
      const { kid } = decodeProtectedHeader(token);
      return kid === undefined ? this.currentKid : typeof kid === "string" ? kid : undefined;
    } catch {
      return undefined;
    }
  }

  /** The current key always; the previous one until its deadline. */
  private usable(kid: string, now: number): boolean {
    return kid === this.currentKid || (kid === this.previousKid && now < this.keys.previous!.untilMs);
  }
}
