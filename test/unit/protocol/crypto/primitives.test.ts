/**
 * The SDK's primitives: published test vectors for each, and interop with node:crypto (OpenSSL)
 * both ways, so a vault wrapped by the SDK opens in any standard implementation and back.
 */
import {
  argon2Sync,
  constants,
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  pbkdf2Sync,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  sign,
  verify,
} from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {
  createAccountKeys,
  DEFAULT_ARGON2ID,
  itemAssociatedData,
  newKdfParams,
  openAccountKeys,
  openItem,
  primitives as p,
  sealItem,
  SecurityError,
  UnlockError,
} from "../../../../sdk";
import { fromBase64, fromHex, toBase64, toHex, utf8 } from "../../../../protocol/encoding";
import { decryptGcm, encryptGcm, openPrivateKeys } from "../../../helpers/crypto";

const hex = (s: string) => fromHex(s.replace(/\s+/g, ""));
const KW_IV = Buffer.from("A6A6A6A6A6A6A6A6", "hex");
const ED25519_PKCS8_PREFIX = "302e020100300506032b657004220420";

describe("test vectors", () => {
  test("Argon2id: the reference implementation's vector (password, somesalt, t=2, m=64 MiB, p=1), and the SDK's derivation agrees with node:crypto's", async () => {
    // The reference vector is below the SDK's floor (an 8-byte salt, 2 passes over 64 MiB):
    // deriveMasterKey refuses it, so it checks node:crypto's Argon2id, which then checks the SDK's.
    const reference = { message: "password", nonce: "somesalt", passes: 2, memory: 65536, parallelism: 1, tagLength: 32 };
    expect(argon2Sync("argon2id", reference).toString("hex")).toBe("09316115d5cf24ed5a15a31a3ba326e5cf32edc24702987c02b6566f61913cf7");
    await expect(
      p.deriveMasterKey("password", {
        algorithm: "argon2id",
        salt: toBase64(utf8("somesalt")),
        iterations: 2,
        memoryKiB: 65536,
        parallelism: 1,
      }),
    ).rejects.toMatchObject({ code: "KDF_UNSUPPORTED" });
    const salt = randomBytes(16);
    const key = await p.deriveMasterKey("pässword", {
      algorithm: "argon2id",
      salt: salt.toString("base64"),
      iterations: 3,
      memoryKiB: 65536,
      parallelism: 4,
    });
    const theirs = argon2Sync("argon2id", {
      message: "pässword".normalize("NFKC"),
      nonce: salt,
      passes: 3,
      memory: 65536,
      parallelism: 4,
      tagLength: 32,
    });
    expect(toHex(key)).toBe(theirs.toString("hex"));
  });

  test("PBKDF2-HMAC-SHA256: RFC 7914 section 11", async () => {
    expect(toHex(await p.pbkdf2Sha256(utf8("passwd"), utf8("salt"), 1, 64))).toBe(
      "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783",
    );
    expect(toHex(await p.pbkdf2Sha256(utf8("Password"), utf8("NaCl"), 80000, 64))).toBe(
      "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d",
    );
  });

  test("HKDF-SHA256: RFC 5869 test case 1", async () => {
    const okm = await p.hkdfSha256(hex("0b".repeat(22)), hex("000102030405060708090a0b0c"), hex("f0f1f2f3f4f5f6f7f8f9"), 42);
    expect(toHex(okm)).toBe("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
  });

  test("AES-256-KW: RFC 3394 section 4.6, 256 bits of key data under a 256-bit KEK", async () => {
    const kek = hex("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F");
    const keyData = hex("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F");
    const expected = "28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43bfb988b9b7a02dd21";
    expect(toHex(await p.aesKwWrap(kek, keyData))).toBe(expected);
    expect(toHex(await p.aesKwUnwrap(kek, hex(expected)))).toBe(toHex(keyData));
  });

  test("Ed25519: RFC 8032 section 7.1, tests 1 and 2", async () => {
    const cases = [
      {
        seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        pub: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        msg: "",
        sig: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
      },
      {
        seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        pub: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        msg: "72",
        sig: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
      },
    ];
    for (const c of cases) {
      const key = await p.importEd25519PrivateKey(hex(ED25519_PKCS8_PREFIX + c.seed));
      expect(toHex(await p.ed25519Sign(key, hex(c.msg)))).toBe(c.sig);
      expect(await p.ed25519Verify(hex(c.pub), hex(c.msg), hex(c.sig))).toBe(true);
      const flipped = hex(c.sig);
      flipped[0]! ^= 1;
      expect(await p.ed25519Verify(hex(c.pub), hex(c.msg), flipped)).toBe(false);
    }
  });

  test("AES-256-GCM with associated data: McGrew-Viega test case 16; a changed AAD or bit fails", async () => {
    const key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
    const iv = "cafebabefacedbaddecaf888";
    const aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
    const ct = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662";
    const tag = "76fc6ece0f4e1768cddf8853bb2d551b";
    const blob = hex(iv + ct + tag);
    expect(toHex(await p.gcmDecrypt(key, blob, aad))).toBe(
      "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
    );
    await expect(p.gcmDecrypt(key, blob, hex("feedfacedeadbeeffeedfacedeadbeefabaddad3"))).rejects.toThrow();
    const flipped = blob.slice();
    flipped[20]! ^= 1;
    await expect(p.gcmDecrypt(key, flipped, aad)).rejects.toThrow();
  });

  test("RSA-OAEP-SHA256 (MGF1-SHA256): a ciphertext made by the OpenSSL command line opens", async () => {
    const v = JSON.parse(fs.readFileSync(path.join(__dirname, "../../../fixtures/rsa-oaep-sha256.json"), "utf8"));
    const key = await p.importRsaPrivateKey(fromBase64(v.privateKeyPkcs8));
    expect(toHex(await p.rsaOaepUnwrap(key, fromBase64(v.ciphertext)))).toBe(v.plaintextHex);
    expect(await p.rsaModulusBytes(fromBase64(v.publicKeySpki))).toBe(256);
  });
});

describe("interop with node:crypto, both ways", () => {
  test("Argon2id and PBKDF2 at the SDK's default and floor parameters agree with node:crypto", async () => {
    const salt = randomBytes(16);
    const argon = { ...DEFAULT_ARGON2ID, salt: salt.toString("base64") };
    const ours = await p.deriveMasterKey("correct horse battery staple", argon);
    const node = argon2Sync("argon2id", {
      message: "correct horse battery staple",
      nonce: salt,
      passes: 3,
      memory: 65536,
      parallelism: 4,
      tagLength: 32,
    });
    expect(toHex(ours)).toBe(node.toString("hex"));
    const pb = await p.deriveMasterKey("hunter2", { algorithm: "pbkdf2-sha256", salt: salt.toString("base64"), iterations: 600_000 });
    expect(toHex(pb)).toBe(pbkdf2Sync("hunter2", salt, 600_000, 32, "sha256").toString("hex"));
    // The auth hash and the stretched key are HKDF-SHA256 of the master key, info "auth" and "enc".
    const { authHash, stretchedKey } = await p.splitMasterKey(pb);
    expect(toHex(authHash)).toBe(Buffer.from(hkdfSync("sha256", pb, Buffer.alloc(0), "auth", 32)).toString("hex"));
    expect(toHex(stretchedKey)).toBe(Buffer.from(hkdfSync("sha256", pb, Buffer.alloc(0), "enc", 32)).toString("hex"));
  });

  test("AES-256-KW", async () => {
    const kek = randomBytes(32),
      key = randomBytes(32);
    const ours = await p.aesKwWrap(new Uint8Array(kek), new Uint8Array(key));
    const d = createDecipheriv("id-aes256-wrap", kek, KW_IV);
    expect(Buffer.concat([d.update(ours), d.final()]).equals(key)).toBe(true);
    const c = createCipheriv("id-aes256-wrap", kek, KW_IV);
    const theirs = Buffer.concat([c.update(key), c.final()]);
    expect(Buffer.from(await p.aesKwUnwrap(new Uint8Array(kek), new Uint8Array(theirs))).equals(key)).toBe(true);
  });

  test("RSA-OAEP-SHA256", async () => {
    const ours = await p.generateRsaKeyPair(2048);
    const key = randomBytes(32);
    const wrapped = await p.rsaOaepWrap(ours.publicKeyDer, new Uint8Array(key));
    const nodePrivate = createPrivateKey({ key: Buffer.from(ours.privateKeyPkcs8), format: "der", type: "pkcs8" });
    expect(privateDecrypt({ key: nodePrivate, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" }, wrapped).equals(key)).toBe(
      true,
    );
    const nodePublic = createPublicKey({ key: Buffer.from(ours.publicKeyDer), format: "der", type: "spki" });
    const theirs = publicEncrypt({ key: nodePublic, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" }, key);
    expect(Buffer.from(await p.rsaOaepUnwrap(ours.privateKey, new Uint8Array(theirs))).equals(key)).toBe(true);
  });

  test("Ed25519", async () => {
    const ours = await p.generateEd25519KeyPair();
    const msg = randomBytes(300);
    const sig = await p.ed25519Sign(ours.privateKey, new Uint8Array(msg));
    const nodePublic = createPublicKey({
      key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), ours.publicKeyRaw]),
      format: "der",
      type: "spki",
    });
    expect(verify(null, msg, nodePublic, sig)).toBe(true);
    const node = generateKeyPairSync("ed25519");
    const theirs = sign(null, msg, node.privateKey);
    const raw = node.publicKey.export({ type: "spki", format: "der" }).subarray(12);
    expect(await p.ed25519Verify(new Uint8Array(raw), new Uint8Array(msg), new Uint8Array(theirs))).toBe(true);
  });

  test("AES-256-GCM with associated data", async () => {
    const key = randomBytes(32),
      aad = Buffer.from("vault/item"),
      msg = randomBytes(1000);
    const ours = await p.gcmEncrypt(new Uint8Array(key), new Uint8Array(msg), new Uint8Array(aad));
    expect(decryptGcm(key, Buffer.from(ours), aad).equals(msg)).toBe(true);
    const theirs = encryptGcm(key, msg, aad);
    expect(Buffer.from(await p.gcmDecrypt(new Uint8Array(key), new Uint8Array(theirs), new Uint8Array(aad))).equals(msg)).toBe(true);
  });

  test("a registration made by the SDK opens with node:crypto, and its self-signature verifies there", async () => {
    const kdf = newKdfParams({ algorithm: "pbkdf2-sha256", iterations: 600_000 });
    const { registration, keys } = await createAccountKeys("pw", { kdf, rsaBits: 2048 });
    const opened = openPrivateKeys(Buffer.from(keys.stretchedKey), registration);
    expect(opened.rsaPrivate.asymmetricKeyType).toBe("rsa");
    expect(opened.edPrivate.asymmetricKeyType).toBe("ed25519");
    const edPublic = createPublicKey({
      key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(registration.signingPublicKey, "base64")]),
      format: "der",
      type: "spki",
    });
    expect(
      verify(null, Buffer.from(registration.publicKey, "base64"), edPublic, Buffer.from(registration.publicKeySignature, "base64")),
    ).toBe(true);
    // The same password opens it again through the SDK; another does not.
    const { stretchedKey } = await p.splitMasterKey(await p.deriveMasterKey("pw", kdf));
    await expect(openAccountKeys(stretchedKey, registration)).resolves.toBeDefined();
    const wrong = await p.splitMasterKey(await p.deriveMasterKey("PW", kdf));
    await expect(openAccountKeys(wrong.stretchedKey, registration)).rejects.toBeInstanceOf(UnlockError);
  });

  test("private keys that do not match the public keys the server returned are refused", async () => {
    const kdf = newKdfParams({ algorithm: "pbkdf2-sha256", iterations: 600_000 });
    const a = await createAccountKeys("pw", { kdf, rsaBits: 2048 });
    const b = await createAccountKeys("pw2", { rsaBits: 2048, kdf });
    const substituted = { ...a.registration, signingPublicKey: b.registration.signingPublicKey };
    await expect(openAccountKeys(a.keys.stretchedKey, substituted)).rejects.toMatchObject({ code: "INCONSISTENT" });
  });
});

describe("items", () => {
  const vaultId = "6f1f0d1e-5a4b-4c3d-8e2f-1a2b3c4d5e6f";
  const itemId = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

  test("an item opens under its key, vault and item id, and node:crypto opens it with the same associated data", async () => {
    const key = p.randomBytes(32);
    const sealed = await sealItem(key, vaultId, itemId, { name: "GitHub", fields: { username: "ana", password: "s3cret" } });
    expect(await openItem(key, vaultId, sealed)).toEqual({
      name: "GitHub",
      type: "login",
      fields: { username: "ana", password: "s3cret" },
    });
    const aad = Buffer.from(`vault-item/v1/${vaultId}/${itemId}/name`);
    expect(Buffer.from(itemAssociatedData(vaultId, itemId, "name")).equals(aad)).toBe(true);
    expect(decryptGcm(Buffer.from(key), Buffer.from(sealed.encryptedName, "base64"), aad).toString()).toBe("GitHub");
  });

  test("moved to another item or vault, swapped between name and data, or under another key: refused", async () => {
    const key = p.randomBytes(32);
    const sealed = await sealItem(key, vaultId, itemId, { name: "n", fields: { a: "b" } });
    const otherId = "1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    await expect(openItem(key, vaultId, { ...sealed, itemId: otherId })).rejects.toBeInstanceOf(SecurityError);
    await expect(openItem(key, otherId, sealed)).rejects.toMatchObject({ code: "TAMPERED" });
    await expect(
      openItem(key, vaultId, { ...sealed, encryptedName: sealed.encryptedData, encryptedData: sealed.encryptedName }),
    ).rejects.toMatchObject({ code: "TAMPERED" });
    await expect(openItem(p.randomBytes(32), vaultId, sealed)).rejects.toMatchObject({ code: "TAMPERED" });
  });
});
