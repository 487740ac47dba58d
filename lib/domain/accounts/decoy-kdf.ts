/**
 * The key-derivation parameters prelogin answers for an email that has no user. They must look
 * like a real user's answer in every field, in their order and in the salt's form, so that
 * prelogin cannot tell registered addresses apart: the SDK's defaults for a new user (argon2id,
 * 3 passes, 64 MiB, 4 lanes: DEFAULT_ARGON2ID, `protocol/crypto/kdf.ts`), with a 16-byte salt in
 * standard base64.
 */
import { DEFAULT_ARGON2ID } from "../../../protocol/crypto/kdf";
import type { Kdf } from "../types";

/**
 * The decoy for one address: `secretDerived` is a keyed hash of the address (at least 16 bytes).
 * Fields in the order a registered user's are stored and answered in (`normalizeKdf`, lib/domain/accounts/keys.ts).
 */
export function decoyKdf(secretDerived: Buffer): Kdf {
  const { algorithm, iterations, memoryKiB, parallelism } = DEFAULT_ARGON2ID;
  return { algorithm, salt: secretDerived.subarray(0, 16).toString("base64"), iterations, memoryKiB, parallelism };
}
