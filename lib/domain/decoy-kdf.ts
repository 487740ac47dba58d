/**
 * The key-derivation parameters prelogin answers for an email that has no user. They must look
 * like a real user's answer in every field, in their order and in the salt's form, so that
 * prelogin cannot tell registered addresses apart: the SDK's defaults for a new user (argon2id,
 * 3 passes, 64 MiB, 4 lanes: `sdk/keys.ts`, DEFAULT_ARGON2ID and newKdfParams, which the tests
 * hold this to), with a 16-byte salt in standard base64.
 */
import type { Kdf } from "./types";

export const SDK_DEFAULT_KDF = { algorithm: "argon2id", iterations: 3, memoryKiB: 65536, parallelism: 4 } as const;

/**
 * The decoy for one address: `secretDerived` is a keyed hash of the address (at least 16 bytes).
 * Fields in the order a registered user's are stored and answered in (`normalizeKdf`, auth service).
 */
export function decoyKdf(secretDerived: Buffer): Kdf {
  const { algorithm, iterations, memoryKiB, parallelism } = SDK_DEFAULT_KDF;
  return { algorithm, salt: secretDerived.subarray(0, 16).toString("base64"), iterations, memoryKiB, parallelism };
}
