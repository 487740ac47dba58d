/**
 * Sealed values: a small JSON value encrypted and authenticated under a key derived from the
 * server's secret (AES-256-GCM), for one purpose and until a time. What the second factors need to
 * keep without a table: a login's pending second step (lib/auth/login-step.ts), a TOTP secret
 * between its setup and its confirmation, a WebAuthn challenge, and TOTP secrets at rest. Every
 * node of a deployment derives the same key, so a value sealed on one opens on another. A value
 * sealed for one purpose never opens for another (the purpose is the GCM additional data).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

const VERSION = "s1";

export class Sealer {
  private readonly keys: Buffer[];

  /** Seals under the first secret; opens under any (an earlier one, during a rotation). */
  constructor(
    serverSecrets: readonly Buffer[],
    private readonly nowMs: () => number,
  ) {
    this.keys = serverSecrets.map((s) => createHmac("sha256", s).update("sealed-values-v1").digest());
  }

  /** `value`, sealed for `purpose`; with `ttlMs`, it stops opening after that long. */
  seal(purpose: string, value: unknown, ttlMs?: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keys[0]!, iv);
    cipher.setAAD(Buffer.from(`${VERSION}\0${purpose}`));
    const body = JSON.stringify({ v: value, ...(ttlMs !== undefined && { exp: this.nowMs() + ttlMs }) });
    const ct = Buffer.concat([cipher.update(body, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString("base64url")}.${ct.toString("base64url")}`;
  }

  /** The value sealed for `purpose`, or null: tampered, sealed for another purpose or key, expired, or not a sealed value. */
  open<T>(purpose: string, sealed: string): T | null {
    const parts = typeof sealed === "string" ? sealed.split(".") : [];
    if (parts.length !== 3 || parts[0] !== VERSION) return null;
    const iv = Buffer.from(parts[1]!, "base64url");
    const ct = Buffer.from(parts[2]!, "base64url");
    if (iv.length !== 12 || ct.length < 17) return null;
    for (const key of this.keys) {
      const value = this.openWith<T>(key, purpose, iv, ct);
      if (value !== null) return value.v;
    }
    return null;
  }

  private openWith<T>(key: Buffer, purpose: string, iv: Buffer, ct: Buffer): { v: T } | null {
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAAD(Buffer.from(`${VERSION}\0${purpose}`));
      decipher.setAuthTag(ct.subarray(ct.length - 16));
      const body = JSON.parse(Buffer.concat([decipher.update(ct.subarray(0, ct.length - 16)), decipher.final()]).toString("utf8")) as {
        v: T;
        exp?: number;
      };
      if (body.exp !== undefined && this.nowMs() > body.exp) return null;
      return { v: body.v };
    } catch {
      return null;
    }
  }
}
