/**
 * Access tokens: HS256 JWTs signed by the server with jose. Verified results are cached by the
 * exact token string until the token expires: verification, not routing, dominates an
 * authenticated request (../shared/notes/ceilings.md).
 */
import { randomUUID } from "node:crypto";
import { SignJWT, jwtVerify } from "jose";
import { unauthorized } from "../errors";
import { ORG_ROLES, type Caller, type OrgRole } from "../domain/types";

export const ISSUER = "vault-service";
export const AUDIENCE = "vault-service-api";
const CACHE_LIMIT = 10_000;

export class AccessTokens {
  private readonly verified = new Map<string, { caller: Caller; expMs: number }>();

  constructor(private readonly secret: Uint8Array, private readonly ttlSec: number) {}

  get lifetimeSec(): number {
    return this.ttlSec;
  }

  async issue(caller: Caller): Promise<string> {
    return new SignJWT({ org: caller.orgId, role: caller.role })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(caller.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSec}s`)
      .setJti(randomUUID())
      .sign(this.secret);
  }

  /** The caller a token names, or `401 UNAUTHORIZED` for a missing, malformed, expired or forged one. */
  async verify(token: string): Promise<Caller> {
    const now = Date.now();
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.expMs > now) return hit.caller;
      this.verified.delete(token);
    }
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.secret, {
        algorithms: ["HS256"],
        issuer: ISSUER,
        audience: AUDIENCE,
        requiredClaims: ["sub", "iat", "exp", "jti"],
      }));
    } catch {
      throw unauthorized("Invalid or expired access token");
    }
    const { sub, org, role, exp } = payload;
    if (typeof sub !== "string" || typeof org !== "string" || !ORG_ROLES.includes(role as OrgRole) || typeof exp !== "number") {
      throw unauthorized("Invalid access token");
    }
    const caller: Caller = { userId: sub, orgId: org, role: role as OrgRole };
    if (this.verified.size >= CACHE_LIMIT) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { caller, expMs: exp * 1000 });
    return caller;
  }
}
