/**
 * What a served key bundle must be on its own, before any pin is consulted (./index.ts runs this
 * before a bundle's keys or email are used).
 */
import { normalizeEmail } from "../../../protocol/email";
import { SecurityError } from "../../errors";
import { isCanonicalId } from "../../../protocol/ids";
import { bundleSelfSignatureVerifies, groupedFingerprint, keyFingerprint } from "../../../protocol/crypto/keys";
import { keyStatementBytes, statementVerifies } from "../../../protocol/formats/statements";
import type { ServedBundle } from "../types";

/**
 * What a bundle must be on its own, before any pin is consulted: the user asked for, by an id in
 * the one form ids have (lower-case UUID), its Ed25519 key's signature over its RSA key, a
 * normalized email, and its key statement, when it has one, verifying over exactly this id, email
 * and these keys.
 */
export async function selfConsistent(
  bundle: ServedBundle,
  expectedUserId?: string,
): Promise<{ userId: string; email: string; keys: string; fingerprint: string }> {
  const userId = bundle?.userId;
  if (!isCanonicalId(userId) || (expectedUserId !== undefined && userId !== expectedUserId))
    throw new SecurityError(
      "INCONSISTENT",
      `asked for the keys of ${expectedUserId ?? "a user"}, got those of ${String(userId)}`,
      expectedUserId,
    );
  if (!(await bundleSelfSignatureVerifies(bundle)))
    throw new SecurityError("BAD_SIGNATURE", `the key bundle of ${bundle.email ?? userId} is not signed by its own signing key`, userId);
  const email = bundle.email;
  if (typeof email !== "string" || emailOrNull(email) !== email)
    throw new SecurityError("IDENTITY_MISMATCH", `the server gives user ${userId} an address that is not a normalized email`, userId);
  const keys = await keyFingerprint(bundle);
  const fingerprint = groupedFingerprint(keys);
  const statement = bundle.keyStatement;
  if (statement) {
    const bytes = keyStatementBytes({ userId, email, keys, version: statement.version });
    if (!(await statementVerifies(bytes, bundle.signingPublicKey, statement.signature))) {
      throw new SecurityError(
        "IDENTITY_MISMATCH",
        `the server pairs user ${userId}, ${email} and keys ${fingerprint} otherwise than the user's own signed key statement: it does not verify`,
        userId,
      );
    }
  }
  return { userId, email, keys, fingerprint };
}

/** The address normalized as the server does, or null for text that is no address we accept. */
export function emailOrNull(text: string): string | null {
  try {
    return normalizeEmail(text);
  } catch {
    return null;
  }
}
