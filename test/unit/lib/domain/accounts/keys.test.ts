/** Keys and wraps (lib/domain/accounts/keys.ts): a registration's key bundle, and a wrap's size and signature for its vault type. */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { checkKdf, checkKeyBundle, checkWrap, normalizeKdf, type KdfParams, type KeyBundle } from "../../../../../lib/domain/accounts/keys";
import {
  badEd25519Length,
  badKdfParameter,
  badKeySignature,
  badPrivateBlob,
  badSalt,
  kdfParameterMissing,
  notCanonicalSpki,
  notEd25519Key,
  notSpkiKey,
  rsaKeyOutOfRange,
} from "../../../../../lib/domain/accounts/refusals";
import { badWrapLength, badWrapSignature } from "../../../../../lib/domain/vaults/refusals";
import { KDF_CAPS } from "../../../../../protocol/crypto/kdf";
import {
  b64,
  newUserKeys,
  registrationBundle,
  signWrap,
  spkiDer,
  wrapPersonal,
  wrapShared,
  type UserKeys,
} from "../../../../helpers/crypto";
import { asRefusal, code, outcomeOf } from "../../../../helpers/refusal";

describe("keys and wraps", () => {
  test("a bundle holds together, and wraps are checked for size and signature", async () => {
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    expect(code(() => checkKeyBundle(bundle))).toBe("ok");
    const vaultKey = randomBytes(32);
    const rsa = wrapShared(vaultKey, bundle.publicKey);
    const kw = wrapPersonal(vaultKey, keys.stretchedKey);
    const base = { holderPublicKey: bundle.publicKey, senderSigningPublicKey: bundle.signingPublicKey };
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(rsa), wrapSignature: b64(signWrap(rsa, keys.edPrivate)) }),
      ),
    ).toBe("ok");
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "personal", encryptedVaultKey: b64(kw), wrapSignature: b64(signWrap(kw, keys.edPrivate)) }),
      ),
    ).toBe("ok");
    expect(
      outcomeOf(() =>
        checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(kw), wrapSignature: b64(signWrap(kw, keys.edPrivate)) }),
      ),
    ).toEqual(asRefusal(badWrapLength(256, "shared")));
    expect(
      outcomeOf(() =>
        checkWrap({ ...base, vaultType: "personal", encryptedVaultKey: b64(rsa), wrapSignature: b64(signWrap(rsa, keys.edPrivate)) }),
      ),
    ).toEqual(asRefusal(badWrapLength(40, "personal")));
    expect(
      outcomeOf(() =>
        checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(rsa), wrapSignature: b64(signWrap(kw, keys.edPrivate)) }),
      ),
    ).toEqual(asRefusal(badWrapSignature()));
  });

  describe("checkKeyBundle: each refusal of a bundle", () => {
    let keys: UserKeys;
    let bundle: KeyBundle;
    beforeAll(async () => {
      keys = await newUserKeys();
      bundle = registrationBundle(keys);
    });
    const der = () => spkiDer(keys.rsaPublic);
    const P = 2n ** 255n - 19n;
    /** A point's encoding (RFC 8032): y little-endian, x's sign in the top bit. */
    const ed25519Encoding = (y: bigint | number, xSign = 0) => {
      const bytes = Buffer.from(BigInt(y).toString(16).padStart(64, "0"), "hex").reverse();
      bytes[31] = bytes[31]! | (xSign << 7);
      return bytes;
    };
    test.each<[string, () => Partial<KeyBundle>, unknown]>([
      ["a bundle that holds together", () => ({}), "ok"],
      ["publicKey not SPKI DER", () => ({ publicKey: b64(Buffer.from("not a key")) }), asRefusal(notSpkiKey())],
      [
        "an Ed25519 key as publicKey",
        () => ({ publicKey: b64(spkiDer(generateKeyPairSync("ed25519").publicKey)) }),
        asRefusal(rsaKeyOutOfRange()),
      ],
      [
        "an RSA key of 1024 bits",
        () => ({ publicKey: b64(spkiDer(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey)) }),
        asRefusal(rsaKeyOutOfRange()),
      ],
      [
        "SPKI DER with a byte after it",
        () => ({ publicKey: b64(Buffer.concat([der(), Buffer.from([0])])) }),
        asRefusal(notCanonicalSpki()),
      ],
      ["a signing key of 31 bytes", () => ({ signingPublicKey: b64(randomBytes(31)) }), asRefusal(badEd25519Length())],
      // 32 bytes Node takes as a key, but no point: y = 2 makes x^2 a non-square; y = p is not canonical; x = 0 has no sign.
      ["32 bytes that are not an Ed25519 point", () => ({ signingPublicKey: b64(ed25519Encoding(2)) }), asRefusal(notEd25519Key())],
      ["32 bytes whose y is p", () => ({ signingPublicKey: b64(ed25519Encoding(P)) }), asRefusal(notEd25519Key())],
      ["32 bytes of x = 0 with its sign bit set", () => ({ signingPublicKey: b64(ed25519Encoding(1, 1)) }), asRefusal(notEd25519Key())],
      ["a publicKeySignature that does not verify", () => ({ publicKeySignature: b64(randomBytes(64)) }), asRefusal(badKeySignature())],
      ["an empty encryptedPrivateKey", () => ({ encryptedPrivateKey: "" }), asRefusal(badPrivateBlob("encryptedPrivateKey"))],
      [
        "an encryptedSigningPrivateKey past 16 KiB",
        () => ({ encryptedSigningPrivateKey: b64(randomBytes(16 * 1024 + 1)) }),
        asRefusal(badPrivateBlob("encryptedSigningPrivateKey")),
      ],
    ])("%s", (_what, change, expected) => {
      expect(outcomeOf(() => checkKeyBundle({ ...bundle, ...change() }))).toEqual(expected);
    });
  });

  describe("KDF parameters: normalizeKdf and checkKdf", () => {
    const salt = b64(randomBytes(16));
    const argon = { algorithm: "argon2id" as const, salt, iterations: 3, memoryKiB: 65536, parallelism: 4 };
    test.each<[string, KdfParams, unknown]>([
      ["argon2id with its parameters", argon, "ok"],
      ["pbkdf2-sha256 at the floor", { algorithm: "pbkdf2-sha256", salt, iterations: 600_000 }, "ok"],
      ["argon2id without memoryKiB", { ...argon, memoryKiB: undefined }, asRefusal(kdfParameterMissing("memoryKiB"))],
      ["argon2id without parallelism", { ...argon, parallelism: undefined }, asRefusal(kdfParameterMissing("parallelism"))],
      [
        "a salt shorter than the least",
        { ...argon, salt: b64(randomBytes(KDF_CAPS.saltBytes.min - 1)) },
        asRefusal(badSalt(KDF_CAPS.saltBytes.min, KDF_CAPS.saltBytes.max)),
      ],
      [
        "a salt longer than the most",
        { ...argon, salt: b64(randomBytes(KDF_CAPS.saltBytes.max + 1)) },
        asRefusal(badSalt(KDF_CAPS.saltBytes.min, KDF_CAPS.saltBytes.max)),
      ],
      [
        "argon2id with 1 iteration",
        { ...argon, iterations: 1 },
        asRefusal(badKdfParameter("argon2id iterations", 2, KDF_CAPS.argon2id.iterations, "iterations")),
      ],
      [
        "argon2id with less memory than the floor",
        { ...argon, memoryKiB: 19455 },
        asRefusal(badKdfParameter("argon2id memoryKiB", 19456, KDF_CAPS.argon2id.memoryKiB, "memoryKiB")),
      ],
      [
        "argon2id past its parallelism cap",
        { ...argon, parallelism: KDF_CAPS.argon2id.parallelism + 1 },
        asRefusal(badKdfParameter("argon2id parallelism", 1, KDF_CAPS.argon2id.parallelism, "parallelism")),
      ],
      [
        "pbkdf2-sha256 below 600,000 iterations",
        { algorithm: "pbkdf2-sha256", salt, iterations: 599_999 },
        asRefusal(badKdfParameter("pbkdf2-sha256 iterations", 600000, KDF_CAPS["pbkdf2-sha256"].iterations, "iterations")),
      ],
    ])("%s", (_what, kdf, expected) => {
      expect(outcomeOf(() => checkKdf(normalizeKdf(kdf)))).toEqual(expected);
    });
  });
});
