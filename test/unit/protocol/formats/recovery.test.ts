/**
 * Account recovery's wire formats without a server (README "Account recovery", "On the wire";
 * protocol/vectors/recovery-vectors.json): the signed bytes of an enrolment, an approval and a
 * recovery session, the code a trustee checks, the sealed copy and Shamir shares, each reproduced
 * by the SDK's WebCrypto code and independently with node:crypto; and each context keeping one
 * kind of signature from passing as another.
 */
import { createDecipheriv, createHash, createPrivateKey, createPublicKey, hkdfSync, sign } from "node:crypto";
import { combine } from "shamir-secret-sharing";
import vectors from "../../../../protocol/vectors/recovery-vectors.json";
import { signatureVerifies } from "../../../../lib/domain/accounts/keys";
import {
  approvalBytes,
  confirmationCode,
  enrolmentBytes,
  enrolmentOrder,
  enrolmentStatementOf,
  isVersioned,
  MAX_ENROLMENT_VERSION,
  normalizeRecoveryCode,
  openRecoveryCopy,
  recoveryCode,
  sessionProofBytes,
  type ApprovalStatement,
  type EnrolmentStatement,
  type VersionedEnrolmentStatement,
} from "../../../../protocol/formats/recovery";

const key = createPrivateKey({
  key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(vectors.signingSeedHex, "hex")]),
  format: "der",
  type: "pkcs8",
});
/** The Ed25519 public key of the vectors' seed, raw, base64 (the last 32 bytes of its SPKI). */
const publicKey = { raw: Buffer.from(createPublicKey(key).export({ format: "der", type: "spki" }).subarray(-32)).toString("base64") };
const utf8 = (b: Uint8Array) => Buffer.from(b).toString("utf8");

const KINDS = {
  enrolment: { bytes: enrolmentBytes(vectors.enrolment.statement as EnrolmentStatement), vector: vectors.enrolment },
  "versioned enrolment": {
    bytes: enrolmentBytes(vectors.enrolmentV2.statement as VersionedEnrolmentStatement),
    vector: vectors.enrolmentV2,
  },
  approval: { bytes: approvalBytes(vectors.approval.statement as ApprovalStatement), vector: vectors.approval },
  session: { bytes: sessionProofBytes({ requestId: vectors.session.requestId, userId: vectors.session.userId }), vector: vectors.session },
};

test.each(Object.entries(KINDS))(
  "the %s: its signed bytes and signature, by the SDK and node:crypto; the server verifies it",
  (_kind, { bytes, vector }) => {
    expect(utf8(bytes)).toBe(vector.signed);
    expect(sign(null, bytes, key).toString("base64")).toBe(vector.signature);
    expect(signatureVerifies(Buffer.from(bytes), Buffer.from(vector.signature, "base64"), publicKey.raw)).toBe(true);
  },
);

test("each kind's signature verifies as no other kind (the context line)", () => {
  const entries = Object.entries(KINDS);
  for (const [a, { vector }] of entries)
    for (const [b, { bytes }] of entries)
      if (a !== b) expect(signatureVerifies(Buffer.from(bytes), Buffer.from(vector.signature, "base64"), publicKey.raw)).toBe(false);
});

test("an enrolment's bytes do not depend on the order its trustees are listed in", () => {
  const s = vectors.enrolment.statement as EnrolmentStatement;
  expect(utf8(enrolmentBytes({ ...s, trustees: [...s.trustees].reverse() }))).toBe(vectors.enrolment.signed);
});

test("a versioned enrolment signs its version, the account keys and the KDF statement version it was made under, in its own context", () => {
  const v2 = vectors.enrolmentV2.statement as VersionedEnrolmentStatement;
  expect(vectors.enrolmentV2.signed.startsWith("vault-recovery-enrolment/v2\n")).toBe(true);
  expect(isVersioned(v2)).toBe(true);
  expect(isVersioned(vectors.enrolment.statement as EnrolmentStatement)).toBe(false);
  // The same enrolment without its version is the unversioned form, byte for byte (old enrolments keep verifying).
  const { version: _v, keys: _k, kdfVersion: _d, ...unversioned } = v2;
  expect(utf8(enrolmentBytes(unversioned))).toBe(vectors.enrolment.signed);
  // The version's signature is over each field: another version, keys or KDF version does not verify; nor does the v1 signature.
  const verifies = (s: VersionedEnrolmentStatement | EnrolmentStatement, signature: string) =>
    signatureVerifies(Buffer.from(enrolmentBytes(s)), Buffer.from(signature, "base64"), publicKey.raw);
  expect(verifies(v2, vectors.enrolmentV2.signature)).toBe(true);
  for (const changed of [{ version: 2 }, { keys: "78".repeat(32) }, { kdfVersion: 1 }])
    expect(verifies({ ...v2, ...changed }, vectors.enrolmentV2.signature)).toBe(false);
  expect(verifies(v2, vectors.enrolment.signature)).toBe(false);
  expect(verifies(unversioned, vectors.enrolmentV2.signature)).toBe(false);
});

test("enrolments order by KDF statement version, then by their own version", () => {
  expect(enrolmentOrder(1, 2)).toBeGreaterThan(enrolmentOrder(1, 1));
  expect(enrolmentOrder(2, 1)).toBeGreaterThan(enrolmentOrder(1, MAX_ENROLMENT_VERSION));
  expect(enrolmentOrder(1, 1)).toBeGreaterThan(0);
  expect(Number.isSafeInteger(enrolmentOrder(1_000_000, MAX_ENROLMENT_VERSION))).toBe(true);
});

test("the statement of a stored enrolment carries its version when it has one", async () => {
  const stored = {
    enrolmentId: "0b6f8f0e-2a43-4d0c-9a57-7e6a2f1d3c44",
    userId: "5d5c7ee4-5e5f-8a1c-9b1e-2b7c6f2a9d10",
    threshold: 2,
    copy: "AAAA",
    shares: [{ trusteeId: "aaaaaaaa-0000-4000-8000-000000000001", encryptedShare: "AAAA", trusteeKeys: "11".repeat(32) }],
  };
  expect(isVersioned(await enrolmentStatementOf(stored))).toBe(false);
  const versioned = await enrolmentStatementOf({ ...stored, version: 4, keys: "77".repeat(32), kdfVersion: 2 });
  expect(versioned).toMatchObject({ version: 4, keys: "77".repeat(32), kdfVersion: 2 });
  expect(utf8(enrolmentBytes(versioned)).startsWith("vault-recovery-enrolment/v2\n")).toBe(true);
});

test("the codes: 80 bits of SHA-256 as Crockford base32, over the one-time key (and the account's keys), reproduced with node:crypto", async () => {
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const independent = (...parts: string[]) => {
    const digest = createHash("sha256").update(parts.join("\0")).digest().subarray(0, 10);
    const bits = [...digest].map((b) => b.toString(2).padStart(8, "0")).join("");
    return (bits.match(/.{5}/g) ?? []).map((c) => alphabet[parseInt(c, 2)]).join("");
  };
  const { publicKey: requestKey, email, code } = vectors.code;
  expect(await recoveryCode(requestKey, email)).toBe(code);
  expect(code.replace(/-/g, "")).toBe(independent("vault-recovery-code/v3", requestKey, email));
  const c = vectors.confirmation;
  expect(await confirmationCode(c.publicKey, c.accountKeys)).toBe(c.code);
  expect(c.code.replace(/-/g, "")).toBe(independent("vault-recovery-confirm/v1", c.publicKey, c.accountKeys));
  // Typed back loosely.
  expect(normalizeRecoveryCode(code.toLowerCase().replace(/0/g, "o").replace(/-/g, " "))).toBe(code.replace(/-/g, ""));
  // Another key, or other account keys, give other codes.
  expect(await recoveryCode(requestKey + "A", email)).not.toBe(code);
  // The same key for another account's request gives another code.
  expect(await recoveryCode(requestKey, "bob@example.test")).not.toBe(code);
  expect(await confirmationCode(c.publicKey, "98".repeat(32))).not.toBe(c.code);
});

test("the copy: HKDF-SHA256 of the secret, AES-256-GCM with its ids as associated data; opened by the SDK and node:crypto", async () => {
  const c = vectors.copy;
  const secret = Buffer.from(c.secretHex, "hex");
  expect(Buffer.from(await openRecoveryCopy(new Uint8Array(secret), c.userId, c.enrolmentId, c.copy)).toString("hex")).toBe(
    c.stretchedKeyHex,
  );
  const k = Buffer.from(hkdfSync("sha256", secret, Buffer.from(c.enrolmentId), Buffer.from("vault-recovery-key/v1"), 32));
  const blob = Buffer.from(c.copy, "base64");
  const decipher = createDecipheriv("aes-256-gcm", k, blob.subarray(0, 12));
  decipher.setAAD(Buffer.from(`vault-recovery-copy/v1\0${c.userId}\0${c.enrolmentId}`));
  decipher.setAuthTag(blob.subarray(blob.length - 16));
  expect(Buffer.concat([decipher.update(blob.subarray(12, blob.length - 16)), decipher.final()]).toString("hex")).toBe(c.stretchedKeyHex);
  // Another account's or enrolment's ids, or another secret: it does not open.
  await expect(openRecoveryCopy(new Uint8Array(secret), c.userId, "0b6f8f0e-2a43-4d0c-9a57-7e6a2f1d3c45", c.copy)).rejects.toBeTruthy();
  secret[0] ^= 1;
  await expect(openRecoveryCopy(new Uint8Array(secret), c.userId, c.enrolmentId, c.copy)).rejects.toBeTruthy();
});

test("shares: any k of them give the secret back; fewer give something else", async () => {
  const s = vectors.shares;
  const shares = s.sharesHex.map((h) => new Uint8Array(Buffer.from(h, "hex")));
  for (const pair of [
    [0, 1],
    [0, 2],
    [1, 2],
  ]) {
    expect(Buffer.from(await combine(pair.map((i) => shares[i]!))).toString("hex")).toBe(s.secretHex);
  }
  // One share alone is refused by the library; with a made-up second share the result is not the secret.
  const madeUp = new Uint8Array(shares[0]!.length);
  madeUp[madeUp.length - 1] = shares[0]![shares[0]!.length - 1] === 200 ? 201 : 200;
  expect(Buffer.from(await combine([shares[0]!, madeUp])).toString("hex")).not.toBe(s.secretHex);
});
