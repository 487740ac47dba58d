/**
 * Passkey unlock's wire format without a server (protocol/formats/passkey-unlock.ts;
 * protocol/vectors/passkey-unlock-vectors.json): the PRF salt, the keys derived from the PRF output
 * and the stretched key, the associated data of each wrap, and the wraps themselves, reproduced with
 * node:crypto and opened by the SDK's WebCrypto code; and each wrap refusing another passkey,
 * account, account version or part.
 */
import { createDecipheriv, createHash, hkdfSync } from "node:crypto";
import vectors from "../../../../protocol/vectors/passkey-unlock-vectors.json";
import {
  newPasskeyUnlock,
  openPasskeyUnlock,
  PASSKEY_UNLOCK_CONTEXT,
  prfSalt,
  rewrapPasskeyUnlock,
  unlockAad,
} from "../../../../protocol/formats/passkey-unlock";
import { SecurityError } from "../../../../protocol/errors";

const hex = (h: string) => new Uint8Array(Buffer.from(h, "hex"));
const prf = hex(vectors.prfHex);
const stretchedKey = hex(vectors.stretchedKeyHex);
const binding = vectors.binding;
const hkdf = (ikm: Uint8Array, info: string) => Buffer.from(hkdfSync("sha256", ikm, Buffer.alloc(0), Buffer.from(info), 32));

/** AES-256-GCM opened with node:crypto: iv (12) || ciphertext || tag (16). */
function nodeOpen(key: Uint8Array, blob: string, aad: Uint8Array): Buffer {
  const b = Buffer.from(blob, "base64");
  const d = createDecipheriv("aes-256-gcm", key, b.subarray(0, 12));
  d.setAAD(aad);
  d.setAuthTag(b.subarray(b.length - 16));
  return Buffer.concat([d.update(b.subarray(12, b.length - 16)), d.final()]);
}

test("the PRF salt, the derived keys and the associated data are the vectors', by node:crypto and by the SDK", async () => {
  expect(Buffer.from(await prfSalt()).toString("hex")).toBe(vectors.prfSaltHex);
  expect(createHash("sha256").update(`${PASSKEY_UNLOCK_CONTEXT}\nprf-salt`).digest("hex")).toBe(vectors.prfSaltHex);
  expect(hkdf(prf, `${PASSKEY_UNLOCK_CONTEXT}\nprf-key`).toString("hex")).toBe(vectors.prfKeyHex);
  expect(hkdf(stretchedKey, `${PASSKEY_UNLOCK_CONTEXT}\nkeep-key`).toString("hex")).toBe(vectors.keepKeyHex);
  for (const part of ["credential-key", "kept-key", "stretched-key"] as const)
    expect(Buffer.from(unlockAad(part, binding)).toString("hex")).toBe(vectors.aad[part]);
});

test("node:crypto opens the vectors' wraps: the credential key under the PRF's key and the stretched key's, the stretched key under it", () => {
  const credentialKey = nodeOpen(hex(vectors.prfKeyHex), vectors.wraps.prfWrappedKey, hex(vectors.aad["credential-key"]));
  expect(credentialKey.toString("hex")).toBe(vectors.credentialKeyHex);
  expect(nodeOpen(hex(vectors.keepKeyHex), vectors.wraps.keptWrappedKey, hex(vectors.aad["kept-key"])).toString("hex")).toBe(
    vectors.credentialKeyHex,
  );
  expect(nodeOpen(credentialKey, vectors.wraps.wrappedStretchedKey, hex(vectors.aad["stretched-key"])).toString("hex")).toBe(
    vectors.stretchedKeyHex,
  );
});

test("the SDK opens the vectors' wraps with the PRF output, and re-wraps them for a new password from the kept key", async () => {
  expect(Buffer.from(await openPasskeyUnlock(prf, vectors.wraps, binding)).toString("hex")).toBe(vectors.stretchedKeyHex);
  const next = new Uint8Array(32).fill(0x5a);
  const later = { ...binding, accountVersion: binding.accountVersion + 1 };
  const rewrapped = await rewrapPasskeyUnlock(vectors.wraps.keptWrappedKey, stretchedKey, next, later);
  const unlocked = await openPasskeyUnlock(prf, { prfWrappedKey: vectors.wraps.prfWrappedKey, ...rewrapped }, later);
  expect(Buffer.from(unlocked)).toEqual(Buffer.from(next));
  // And the next re-wrap starts from the new password's kept key.
  await expect(rewrapPasskeyUnlock(rewrapped.keptWrappedKey, next, stretchedKey, { ...later, accountVersion: 5 })).resolves.toBeDefined();
});

test.each([
  ["another passkey", { credentialId: "another" }],
  ["another account", { userId: "00000000-0000-4000-8000-000000000001" }],
  ["another account version", { accountVersion: 4 }],
])("the wraps refuse %s: PASSKEY_UNLOCK_MISMATCH", async (_, change) => {
  const err = await openPasskeyUnlock(prf, vectors.wraps, { ...binding, ...change }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SecurityError);
  expect((err as SecurityError).code).toBe("PASSKEY_UNLOCK_MISMATCH");
});

test("a wrap does not pass for another part, nor opens with another PRF output or stretched key", async () => {
  const swapped = { prfWrappedKey: vectors.wraps.keptWrappedKey, wrappedStretchedKey: vectors.wraps.wrappedStretchedKey };
  await expect(openPasskeyUnlock(prf, swapped, binding)).rejects.toMatchObject({ code: "PASSKEY_UNLOCK_MISMATCH" });
  await expect(openPasskeyUnlock(new Uint8Array(32).fill(1), vectors.wraps, binding)).rejects.toMatchObject({
    code: "PASSKEY_UNLOCK_MISMATCH",
  });
  await expect(rewrapPasskeyUnlock(vectors.wraps.keptWrappedKey, new Uint8Array(32), stretchedKey, binding)).rejects.toMatchObject({
    code: "PASSKEY_UNLOCK_MISMATCH",
  });
  await expect(newPasskeyUnlock(new Uint8Array(16), stretchedKey, binding)).rejects.toMatchObject({ code: "PASSKEY_UNLOCK_MISMATCH" });
});

test("new wraps open only with the PRF they were made from, each with a fresh credential key", async () => {
  const a = await newPasskeyUnlock(prf, stretchedKey, binding);
  const b = await newPasskeyUnlock(prf, stretchedKey, binding);
  expect(a.prfWrappedKey).not.toBe(b.prfWrappedKey);
  expect(Buffer.from(await openPasskeyUnlock(prf, a, binding))).toEqual(Buffer.from(stretchedKey));
  await expect(
    openPasskeyUnlock(prf, { prfWrappedKey: a.prfWrappedKey, wrappedStretchedKey: b.wrappedStretchedKey }, binding),
  ).rejects.toMatchObject({
    code: "PASSKEY_UNLOCK_MISMATCH",
  });
});
