/**
 * Sends' wire format without a server (protocol/formats/sends.ts; protocol/vectors/send-vectors.json,
 * made with node:crypto alone): the link, the keys derived from its secret and a password, the
 * associated data, the sealed parts opened by the SDK's WebCrypto code and the SDK's own opened by
 * node:crypto, each part refusing another send, place or final flag or a changed bit, the header's
 * checks, and the sender's owner note (sdk/sends/owner-note.ts).
 */
import { argon2Sync, constants, createCipheriv, createHash, createDecipheriv, hkdfSync, privateDecrypt, verify } from "node:crypto";
import vectors from "../../../../protocol/vectors/send-vectors.json";
import {
  SEND_PART_BYTES,
  SEND_PART_OVERHEAD,
  SEND_PASSWORD_KDF,
  deriveSendKeys,
  headerBytes,
  openSendPart,
  ownerNoteAad,
  parseSendHeader,
  parseSendLink,
  sealSendPart,
  sendLinkOf,
  sendPartAad,
  sendPartCount,
  type OwnerNote,
  type SendHeader,
} from "../../../../protocol/formats/sends";
import { importEd25519PrivateKey, importRsaPrivateKey } from "../../../../protocol/crypto/primitives";
import { openOwnerNote, sealOwnerNote, type NoteKeys } from "../../../../sdk/sends/owner-note";
import { newUserKeys, spkiDer } from "../../../helpers/crypto";

const hex = (h: string) => new Uint8Array(Buffer.from(h, "hex"));
const toHexText = (b: Uint8Array) => Buffer.from(b).toString("hex");
const secret = hex(vectors.secretHex);
const sendId = vectors.sendId;
const otherId = "3f9c1d2e-7a4b-4e5f-8c6d-0a1b2c3d4e60";
const contentKey = hex(vectors.contentKeyHex);
const contentKeyPw = hex(vectors.contentKeyWithPasswordHex);
const none = Buffer.alloc(0);
const hkdf = (ikm: Uint8Array, info: string, length: number) => Buffer.from(hkdfSync("sha256", ikm, none, Buffer.from(info), length));

function nodeSeal(key: Uint8Array, iv: Uint8Array, plain: Uint8Array, aad: Uint8Array): Buffer {
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(aad);
  return Buffer.concat([iv, c.update(plain), c.final(), c.getAuthTag()]);
}

function nodeOpen(key: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Buffer {
  const b = Buffer.from(sealed);
  const d = createDecipheriv("aes-256-gcm", key, b.subarray(0, 12));
  d.setAAD(aad);
  d.setAuthTag(b.subarray(b.length - 16));
  return Buffer.concat([d.update(b.subarray(12, b.length - 16)), d.final()]);
}

describe("keys", () => {
  test("node:crypto reproduces the vectors' salt, Argon2id, proof and keys from the secret, the sendId and the NFKC password", () => {
    expect(vectors.password.normalize("NFKC")).toBe(vectors.passwordNfkc);
    const salt = hkdf(secret, `vault-send-password-salt/v1\n${sendId}`, 16);
    expect(salt.toString("hex")).toBe(vectors.passwordSaltHex);
    const pw = argon2Sync("argon2id", {
      message: Buffer.from(vectors.passwordNfkc),
      nonce: salt,
      passes: SEND_PASSWORD_KDF.iterations,
      memory: SEND_PASSWORD_KDF.memoryKiB,
      parallelism: SEND_PASSWORD_KDF.parallelism,
      tagLength: 32,
    });
    expect(pw.toString("hex")).toBe(vectors.passwordHashHex);
    expect(hkdf(pw, "vault-send-password-proof/v1", 32).toString("hex")).toBe(vectors.passwordProofHex);
    expect(hkdf(pw, "vault-send-password-key/v1", 32).toString("hex")).toBe(vectors.passwordKeyHex);
    expect(hkdf(secret, `vault-send-content/v1\n${sendId}`, 32).toString("hex")).toBe(vectors.contentKeyHex);
    const ikm = Buffer.concat([secret, hex(vectors.passwordKeyHex)]);
    expect(hkdf(ikm, `vault-send-content/v1\n${sendId}`, 32).toString("hex")).toBe(vectors.contentKeyWithPasswordHex);
    const access = hkdf(secret, `vault-send-access/v1\n${sendId}`, 32);
    expect(access.toString("hex")).toBe(vectors.accessProofHex);
    expect(createHash("sha256").update(access).digest("hex")).toBe(vectors.accessHashHex);
  });

  test("deriveSendKeys gives the vectors' content key without a password (and no proof), and with one its key and proof", async () => {
    const plain = await deriveSendKeys(secret, sendId);
    expect(toHexText(plain.contentKey)).toBe(vectors.contentKeyHex);
    expect(plain.passwordProof).toBeUndefined();
    const withPw = await deriveSendKeys(secret, sendId, vectors.password);
    expect(toHexText(withPw.contentKey)).toBe(vectors.contentKeyWithPasswordHex);
    expect(toHexText(withPw.passwordProof!)).toBe(vectors.passwordProofHex);
    // The link's access proof is the secret's, whatever the password.
    for (const k of [plain, withPw]) expect(toHexText(k.accessProof)).toBe(vectors.accessProofHex);
    expect(toHexText((await deriveSendKeys(secret, otherId)).accessProof)).not.toBe(vectors.accessProofHex);
    // The same password typed as its NFKC form derives the same.
    expect(toHexText((await deriveSendKeys(secret, sendId, vectors.passwordNfkc)).contentKey)).toBe(vectors.contentKeyWithPasswordHex);
  });

  test("the content key depends on the password and the sendId: the link's secret alone does not open a send with a password", async () => {
    const [mine, minePw, otherSend, otherSendPw, otherPassword] = await Promise.all([
      deriveSendKeys(secret, sendId),
      deriveSendKeys(secret, sendId, vectors.password),
      deriveSendKeys(secret, otherId),
      deriveSendKeys(secret, otherId, vectors.password),
      deriveSendKeys(secret, sendId, `${vectors.password}!`),
    ]);
    const keys = [mine, minePw, otherSend, otherSendPw, otherPassword].map((k) => toHexText(k.contentKey));
    expect(new Set(keys).size).toBe(keys.length);
    expect(toHexText(otherPassword.passwordProof!)).not.toBe(toHexText(minePw.passwordProof!));
    expect(toHexText(otherSendPw.passwordProof!)).not.toBe(toHexText(minePw.passwordProof!));
    // A server that skips the password check answers the header; it opens under no key but the password's.
    const header = hex(vectors.file.header.sealedHex);
    await expect(openSendPart(contentKey, sendId, 0, false, header)).rejects.toThrow();
    await expect(openSendPart(otherPassword.contentKey, sendId, 0, false, header)).rejects.toThrow();
    await expect(openSendPart(contentKeyPw, sendId, 0, false, header)).resolves.toBeDefined();
  });
});

describe("parts", () => {
  test("the associated data is the vectors': context, sendId, index (u32 big-endian) and the final flag; the owner note's its own", () => {
    for (const a of vectors.partAad) expect(toHexText(sendPartAad(sendId, a.index, a.final))).toBe(a.aadHex);
    expect(toHexText(ownerNoteAad(sendId))).toBe(vectors.ownerNoteAadHex);
  });

  test("node:crypto reproduces the vectors' sealed parts, and the SDK opens them to the headers and the file", async () => {
    const sealed = [
      { key: contentKey, plain: Buffer.from(vectors.text.headerJson), ...vectors.text.part },
      { key: contentKeyPw, plain: Buffer.from(vectors.file.headerJson), ...vectors.file.header },
      { key: contentKeyPw, plain: Buffer.from(hex(vectors.file.part.plainHex)), ...vectors.file.part },
    ];
    for (const p of sealed) {
      expect(nodeSeal(p.key, hex(p.ivHex), p.plain, sendPartAad(sendId, p.index, p.final)).toString("hex")).toBe(p.sealedHex);
      expect(Buffer.from(await openSendPart(p.key, sendId, p.index, p.final, hex(p.sealedHex)))).toEqual(p.plain);
    }
    const text = parseSendHeader(await openSendPart(contentKey, sendId, 0, true, hex(vectors.text.part.sealedHex)));
    expect(text).toEqual(JSON.parse(vectors.text.headerJson));
    expect(Buffer.from(headerBytes(JSON.parse(vectors.text.headerJson) as SendHeader)).toString()).toBe(vectors.text.headerJson);
    const file = parseSendHeader(await openSendPart(contentKeyPw, sendId, 0, false, hex(vectors.file.header.sealedHex)));
    expect(file).toEqual(JSON.parse(vectors.file.headerJson));
    expect([sendPartCount(text!), sendPartCount(file!)]).toEqual([1, 2]);
  });

  test("node:crypto opens a part the SDK sealed, 28 bytes longer than its plaintext, under a fresh IV each time", async () => {
    const plain = Buffer.from("a part sealed by WebCrypto");
    const a = await sealSendPart(contentKeyPw, sendId, 3, false, plain);
    const b = await sealSendPart(contentKeyPw, sendId, 3, false, plain);
    expect(a.length).toBe(plain.length + SEND_PART_OVERHEAD);
    expect(toHexText(a.subarray(0, 12))).not.toBe(toHexText(b.subarray(0, 12)));
    expect(nodeOpen(contentKeyPw, a, sendPartAad(sendId, 3, false))).toEqual(plain);
    expect(() => nodeOpen(contentKeyPw, a, sendPartAad(sendId, 3, true))).toThrow();
  });

  test("a part opens only as its own send's, at its own place, with its own final flag, under its key, unchanged", async () => {
    const p = vectors.file.part;
    const sealed = hex(p.sealedHex);
    await expect(openSendPart(contentKeyPw, sendId, 1, true, sealed)).resolves.toBeDefined();
    await expect(openSendPart(contentKeyPw, otherId, 1, true, sealed)).rejects.toThrow(); // another send's
    await expect(openSendPart(contentKeyPw, sendId, 2, true, sealed)).rejects.toThrow(); // moved
    await expect(openSendPart(contentKeyPw, sendId, 1, false, sealed)).rejects.toThrow(); // the last, taken for one in the middle
    await expect(openSendPart(contentKey, sendId, 1, true, sealed)).rejects.toThrow(); // the key without the password
    for (const at of [0, 12, sealed.length - 1]) {
      const flipped = sealed.slice();
      flipped[at]! ^= 1;
      await expect(openSendPart(contentKeyPw, sendId, 1, true, flipped)).rejects.toThrow();
    }
    // A text's header is the last part: a server claiming more parts (final false) makes it refuse.
    await expect(openSendPart(contentKey, sendId, 0, false, hex(vectors.text.part.sealedHex))).rejects.toThrow();
  });

  test("a text is one part; a file, the header and one part per SEND_PART_BYTES (an empty file, one empty part)", () => {
    expect(sendPartCount({ kind: "text" })).toBe(1);
    const file = (size: number) => sendPartCount({ kind: "file", file: { name: "f", type: "", size } });
    expect([0, 1, SEND_PART_BYTES, SEND_PART_BYTES + 1, 4 * SEND_PART_BYTES].map(file)).toEqual([2, 2, 2, 3, 5]);
  });
});

describe("links", () => {
  const encoded = vectors.link.slice(vectors.link.lastIndexOf("/") + 1);
  const at = (tail: string) => `${vectors.base}/#/send/${tail}`;

  test("the link is the vectors'; it parses back to its base, sendId and secret, whatever the base's trailing slashes or fragment", () => {
    expect(sendLinkOf(vectors.base, sendId, secret)).toBe(vectors.link);
    expect(sendLinkOf(`${vectors.base}//`, sendId, secret)).toBe(vectors.link);
    expect(sendLinkOf(`${vectors.base}/#/vault/items`, sendId, secret)).toBe(vectors.link);
    expect(parseSendLink(vectors.link)).toEqual({ base: vectors.base, sendId, secret });
    expect(parseSendLink(`  ${vectors.link}\n`)).toEqual({ base: vectors.base, sendId, secret });
    expect(parseSendLink(`http://localhost:8080#/send/${sendId}/${encoded}`)).toEqual({ base: "http://localhost:8080", sendId, secret });
    const urlSafe = new Uint8Array(32).fill(0xfb);
    expect(parseSendLink(sendLinkOf(vectors.base, sendId, urlSafe))?.secret).toEqual(urlSafe);
    expect(() => sendLinkOf(vectors.base, sendId, secret.subarray(0, 31))).toThrow(RangeError);
  });

  test.each([
    ["a secret of 31 bytes", at(`${sendId}/${Buffer.from(secret.subarray(0, 31)).toString("base64url")}`)],
    ["a secret of 33 bytes", at(`${sendId}/${Buffer.concat([secret, Buffer.from([32])]).toString("base64url")}`)],
    ["a secret one character short", at(`${sendId}/${encoded.slice(0, -1)}`)],
    ["a secret in standard base64", at(`${sendId}/${Buffer.from(new Uint8Array(32).fill(0xfb)).toString("base64").replace(/=+$/, "")}`)],
    ["a secret whose last character has bits set past the 32 bytes", at(`${sendId}/${encoded.slice(0, -1)}9`)],
    ["an uppercase sendId", at(`${sendId.toUpperCase()}/${encoded}`)],
    ["a sendId that is not a UUID", at(`${sendId.slice(0, -1)}/${encoded}`)],
    ["a path after the secret", `${vectors.link}/more`],
    ["a query after the secret", `${vectors.link}?x=1`],
    ["another route of the web vault", `${vectors.base}/#/vault/${sendId}/${encoded}`],
    ["the id and secret outside the fragment", `${vectors.base}/send/${sendId}/${encoded}`],
    ["nothing", ""],
  ])("not a link: %s", (_name, text) => {
    expect(parseSendLink(text)).toBeNull();
  });
});

describe("headers", () => {
  const parse = (value: unknown) =>
    parseSendHeader(value instanceof Uint8Array ? value : Buffer.from(typeof value === "string" ? value : JSON.stringify(value)));
  const text = { v: 1, kind: "text", title: "t", text: "x" };
  const file = { v: 1, kind: "file", title: "t", file: { name: "a.txt", type: "text/plain", size: 3 } };

  test("a header keeps the fields it knows, with or without its sender's words, and nothing else", () => {
    expect(parse(text)).toEqual(text);
    expect(parse({ ...text, from: "ada@example.com", extra: 1 })).toEqual({ ...text, from: "ada@example.com" });
    expect(parse({ ...file, file: { ...file.file, size: 0, more: true } })).toEqual({ ...file, file: { ...file.file, size: 0 } });
    expect(parse({ ...text, file: file.file })).toEqual(text);
  });

  test.each([
    ["not JSON", "{"],
    ["not UTF-8", Buffer.from([0xff, 0xfe, 0x7b, 0x7d])],
    ["null", "null"],
    ["an array", "[]"],
    ["a string", '"text"'],
    ["another version", { ...text, v: 2 }],
    ["no version", { ...text, v: undefined }],
    ["no title", { ...text, title: undefined }],
    ["a title that is not text", { ...text, title: 7 }],
    ["a sender that is not text", { ...text, from: 7 }],
    ["another kind", { ...text, kind: "note" }],
    ["a text with no text", { ...text, text: undefined }],
    ["a text whose text is not text", { ...text, text: ["x"] }],
    ["a file with no file", { ...file, file: undefined }],
    ["a file whose file is null", { ...file, file: null }],
    ["a file with no name", { ...file, file: { ...file.file, name: undefined } }],
    ["a file whose type is not text", { ...file, file: { ...file.file, type: 1 } }],
    ["a file of negative size", { ...file, file: { ...file.file, size: -1 } }],
    ["a file of fractional size", { ...file, file: { ...file.file, size: 1.5 } }],
    ["a file of unsafe size", { ...file, file: { ...file.file, size: 2 ** 53 } }],
    ["a file whose size is text", { ...file, file: { ...file.file, size: "3" } }],
  ])("not a header: %s", (_name, value) => {
    expect(parse(value)).toBeNull();
  });
});

describe("owner notes", () => {
  const note: OwnerNote = { title: "Wi-Fi at the office", kind: "text", secret: vectors.link.slice(vectors.link.lastIndexOf("/") + 1) };
  let ada: Awaited<ReturnType<typeof newUserKeys>>;
  let bob: Awaited<ReturnType<typeof newUserKeys>>;
  let adaKeys: NoteKeys;
  let bobKeys: NoteKeys;
  const noteKeysOf = async (k: typeof ada): Promise<NoteKeys> => ({
    publicKeyDer: new Uint8Array(spkiDer(k.rsaPublic)),
    rsaPrivateKey: await importRsaPrivateKey(new Uint8Array(k.rsaPrivate.export({ type: "pkcs8", format: "der" }))),
    signingPrivateKey: await importEd25519PrivateKey(new Uint8Array(k.edPrivate.export({ type: "pkcs8", format: "der" }))),
    signingPublicKeyRaw: new Uint8Array(Buffer.from(k.edPublic.export({ format: "jwk" }).x!, "base64url")),
  });
  beforeAll(async () => {
    [ada, bob] = await Promise.all([newUserKeys(), newUserKeys()]);
    [adaKeys, bobKeys] = await Promise.all([noteKeysOf(ada), noteKeysOf(bob)]);
  });

  test("signed and sealed by the sender, it opens with their keys, and node:crypto reads it as the format says", async () => {
    const sealed = await sealOwnerNote(adaKeys, sendId, note);
    expect(await openOwnerNote(adaKeys, sendId, sealed)).toEqual(note);
    const bytes = Buffer.from(sealed, "base64");
    const body = bytes.subarray(64);
    const message = Buffer.concat([Buffer.from(`vault-send-owner-note-signature/v1\n${sendId}\n`), body]);
    expect(verify(null, message, ada.edPublic, bytes.subarray(0, 64))).toBe(true);
    const n = body.readUInt16BE(0);
    expect(n).toBe(256); // a 2048-bit key's wrap
    const key = privateDecrypt(
      { key: ada.rsaPrivate, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" },
      body.subarray(2, 2 + n),
    );
    expect(JSON.parse(nodeOpen(key, body.subarray(2 + n), hex(vectors.ownerNoteAadHex)).toString())).toEqual(note);
  });

  test("a note made by anyone holding the sender's public key (a dishonest server) but not signed by the sender is null", async () => {
    // Sealed to ada's public key, as the server could, but signed by another key: its secret would be the server's choice.
    const forged = await sealOwnerNote({ ...adaKeys, signingPrivateKey: bobKeys.signingPrivateKey }, sendId, note);
    expect(await openOwnerNote(adaKeys, sendId, forged)).toBeNull();
  });

  test("it does not open under another sendId, for another account, or changed (null)", async () => {
    const sealed = await sealOwnerNote(adaKeys, sendId, note);
    expect(await openOwnerNote(adaKeys, otherId, sealed)).toBeNull();
    expect(await openOwnerNote(bobKeys, sendId, sealed)).toBeNull();
    const bytes = Buffer.from(sealed, "base64");
    bytes[bytes.length - 1]! ^= 1;
    expect(await openOwnerNote(adaKeys, sendId, bytes.toString("base64"))).toBeNull();
    expect(await openOwnerNote(adaKeys, sendId, "not base64!")).toBeNull();
    expect(await openOwnerNote(adaKeys, sendId, "")).toBeNull();
  });

  test("a note that opens but is not one (another kind, no secret) is null", async () => {
    const odd = [
      { ...note, kind: "folder" },
      { title: note.title, kind: "text" },
    ];
    for (const n of odd) expect(await openOwnerNote(adaKeys, sendId, await sealOwnerNote(adaKeys, sendId, n as OwnerNote))).toBeNull();
  });
});
