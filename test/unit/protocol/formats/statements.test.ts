/**
 * The statements, the invite binding and codes, the rename link and the KDF floor without a
 * server: the published test vectors (README, "Wire formats"; protocol/vectors/statement-vectors.json)
 * reproduced by the SDK's WebCrypto code and by node:crypto, each signature's context keeping it
 * from passing as another kind, and the floor and caps as a table.
 */
import { createHash, createHmac, createPrivateKey, hkdfSync, sign } from "node:crypto";
import vectors from "../../../../protocol/vectors/statement-vectors.json";
import { signatureVerifies } from "../../../../lib/domain/accounts/keys";
import { userIdForKey as serverUserIdForKey, vaultIdFor as serverVaultIdFor } from "../../../../lib/domain/ids";
import { userIdForKey, vaultIdFor } from "../../../../protocol/ids";
import { fromBase64, fromHex, toHex, type Bytes } from "../../../../protocol/encoding";
import { checkKdf, KDF_CAPS, KDF_FLOOR } from "../../../../protocol/crypto/kdf";
import { DEFAULT_ARGON2ID, DEFAULT_PBKDF2, deriveAccountSecrets } from "../../../../protocol/crypto/keys";
import type { KdfParams } from "../../../../protocol/crypto/primitives";
import {
  applyLink,
  linkBytes,
  linkHash,
  linkSignatureVerifies,
  linkSigningBytes,
  parseLink,
  type RosterLink,
} from "../../../../protocol/formats/roster";
import {
  formatInviteCode,
  inviteBindingMac,
  inviteBindingVerifies,
  inviteStatementBytes,
  kdfStatementBytes,
  keyStatementBytes,
  parseInviteCode,
  statementVerifies,
  type InviteStatement,
  type KdfStatement,
  type KeyStatement,
} from "../../../../protocol/formats/statements";

const key = createPrivateKey({
  key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(vectors.signingSeedHex, "hex")]),
  format: "der",
  type: "pkcs8",
});
const utf8 = (b: Uint8Array) => Buffer.from(b).toString("utf8");

const KINDS = {
  key: { bytes: keyStatementBytes(vectors.keyStatement.statement as KeyStatement), vector: vectors.keyStatement },
  kdf: { bytes: kdfStatementBytes(vectors.kdfStatement.statement as KdfStatement), vector: vectors.kdfStatement },
  invite: { bytes: inviteStatementBytes(vectors.inviteStatement.statement as InviteStatement), vector: vectors.inviteStatement },
};

describe("statement test vectors", () => {
  test.each(Object.entries(KINDS))(
    "the %s statement: its signed bytes and signature, on both code paths",
    async (_kind, { bytes, vector }) => {
      expect(utf8(bytes)).toBe(vector.signed);
      // Ed25519 is deterministic: the seed reproduces the signature byte for byte.
      expect(sign(null, bytes, key).toString("base64")).toBe(vector.signature);
      expect(await statementVerifies(bytes, vectors.signingPublicKey, vector.signature)).toBe(true);
      expect(signatureVerifies(Buffer.from(bytes), Buffer.from(vector.signature, "base64"), vectors.signingPublicKey)).toBe(true);
    },
  );

  test("a signature of one kind never verifies as another: each context is part of what is signed", async () => {
    const rename = parseLink(vectors.renameLink.link);
    const all: Array<[string, Bytes, string]> = [
      ...Object.entries(KINDS).map(([kind, k]) => [kind, k.bytes, k.vector.signature] as [string, Bytes, string]),
      ["roster link", linkSigningBytes(rename), rename.sig],
    ];
    for (const [kind, , signature] of all)
      for (const [other, bytes] of all) {
        expect([kind, other, await statementVerifies(bytes, vectors.signingPublicKey, signature)]).toEqual([kind, other, kind === other]);
      }
    // The same values under another context, or without one, are other bytes.
    const { statement } = vectors.keyStatement;
    expect(utf8(keyStatementBytes(statement as KeyStatement)).startsWith("vault-key-statement/v1\n")).toBe(true);
    expect(
      await statementVerifies(
        new TextEncoder().encode(vectors.keyStatement.signed.split("\n")[1]),
        vectors.signingPublicKey,
        vectors.keyStatement.signature,
      ),
    ).toBe(false);
  });

  test("a statement's fields are all covered: changing any one breaks its signature", async () => {
    const { statement, signature } = vectors.inviteStatement;
    for (const [field, value] of Object.entries({
      orgName: "Evil Corp",
      role: "admin",
      email: "eve@example.test",
      expiresAt: "2027-01-01T00:00:00.000Z",
      orgId: "00000000-0000-4000-8000-000000000000",
    })) {
      const bytes = inviteStatementBytes({ ...(statement as InviteStatement), [field]: value });
      expect([field, await statementVerifies(bytes, vectors.signingPublicKey, signature)]).toEqual([field, false]);
    }
    const kdf = vectors.kdfStatement.statement as KdfStatement;
    const bytes = kdfStatementBytes({ ...kdf, kdf: { ...kdf.kdf, salt: "AQECAwQFBgcICQoLDA0ODw==" } });
    expect(await statementVerifies(bytes, vectors.signingPublicKey, vectors.kdfStatement.signature)).toBe(false);
    expect(
      await statementVerifies(kdfStatementBytes({ ...kdf, version: 2 }), vectors.signingPublicKey, vectors.kdfStatement.signature),
    ).toBe(false);
  });

  test("the invite binding: HKDF-SHA256 of the link's secret keys an HMAC-SHA256 of the invitee's key statement", async () => {
    const { secretHex, keyHex, inviteeStatement, mac } = vectors.inviteBinding;
    const secret = fromHex(secretHex);
    expect(Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "vault-invite-binding/v1", 32)).toString("hex")).toBe(keyHex);
    expect(createHmac("sha256", Buffer.from(keyHex, "hex")).update(keyStatementBytes(inviteeStatement)).digest("base64")).toBe(mac);
    expect(await inviteBindingMac(secret, inviteeStatement)).toBe(mac);
    expect(await inviteBindingVerifies(secret, inviteeStatement, mac)).toBe(true);
    expect(await inviteBindingVerifies(fromHex("00".repeat(32)), inviteeStatement, mac)).toBe(false);
    expect(await inviteBindingVerifies(secret, { ...inviteeStatement, keys: "c".repeat(64) }, mac)).toBe(false);
  });

  test("invite codes: token, binding secret, inviter fingerprint and invite id; a link holds one; a bare token is one", () => {
    const { token, secretHex, inviterKey, inviteId, code } = vectors.inviteCode;
    expect(formatInviteCode({ token, secret: fromHex(secretHex), inviterKey, inviteId })).toBe(code);
    const parsed = parseInviteCode(`http://127.0.0.1:3000/#/invite/${code}`)!;
    expect([parsed.token, toHex(parsed.secret!), parsed.inviterKey, parsed.inviteId]).toEqual([token, secretHex, inviterKey, inviteId]);
    expect(parseInviteCode(`  ${code}\n`)).toMatchObject({ token, inviterKey, inviteId });
    expect(parseInviteCode(token)).toEqual({ token });
    expect(parseInviteCode(`http://x/#/invite/%E0%A4%A`)).toBeNull();
    const [, s, k, i] = code.split(".");
    for (const bad of ["", "a.b", `${token}.short.${k}.${i}`, `${token}.${s}.${k}`, `${token}.${s}.${k}.AAAA`, "x y", `${code}.extra`])
      expect([bad, parseInviteCode(bad)]).toEqual([bad, null]);
  });

  test("a new user's id: a version 8 UUID from the SHA-256 of the context and their Ed25519 key, the same on both sides", async () => {
    const { signingPublicKey, sha256, userId } = vectors.userId;
    expect(createHash("sha256").update("vault-user-id/v1\n").update(Buffer.from(signingPublicKey, "base64")).digest("hex")).toBe(sha256);
    expect(await userIdForKey(fromBase64(signingPublicKey))).toBe(userId);
    expect(serverUserIdForKey(signingPublicKey)).toBe(userId);
    expect(userId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test("a signed vault's id: a version 8 UUID from the SHA-256 of the context, its creator's id and their wrap, the same on both sides", async () => {
    const { creatorId, encryptedVaultKey, sha256, vaultId } = vectors.vaultId;
    expect(createHash("sha256").update(`vault-id/v1\n${creatorId}\n${encryptedVaultKey}`).digest("hex")).toBe(sha256);
    expect(await vaultIdFor(creatorId, encryptedVaultKey)).toBe(vaultId);
    expect(serverVaultIdFor(creatorId, encryptedVaultKey)).toBe(vaultId);
  });

  test("the rename link: canonical bytes with the name as UTF-8, hash, signature; it changes the name the roster gives", async () => {
    const link = parseLink(vectors.renameLink.link) as RosterLink;
    expect(utf8(linkBytes(link))).toBe(vectors.renameLink.canonical);
    expect(await linkHash(link)).toBe(vectors.renameLink.hash);
    expect(createHash("sha256").update(linkBytes(link)).digest("hex")).toBe(vectors.renameLink.hash);
    expect(sign(null, linkSigningBytes(link), key).toString("base64")).toBe(link.sig);
    expect(await linkSignatureVerifies(link, fromBase64(vectors.signingPublicKey))).toBe(true);
    const before = {
      vaultId: link.vaultId,
      vaultType: "shared" as const,
      seq: 2,
      head: link.prev,
      keyVersion: 2,
      members: new Map([[link.actorId, { role: "admin" as const, key: "a".repeat(64) }]]),
      wraps: new Map(),
      rekeyRequired: false,
      name: "Team",
    };
    expect(applyLink(before, link, vectors.renameLink.hash).name).toBe("Team – Ops");
    const member = { ...before, members: new Map([[link.actorId, { role: "member" as const, key: "a".repeat(64) }]]) };
    expect(() => applyLink(member, link, vectors.renameLink.hash)).toThrow(/may not rename/);
  });
});

describe("the KDF floor and caps", () => {
  const salt = Buffer.alloc(16, 1).toString("base64");
  const argon = (iterations: number, memoryKiB: number, parallelism = 1): KdfParams => ({
    algorithm: "argon2id",
    salt,
    iterations,
    memoryKiB,
    parallelism,
  });
  const pbkdf2 = (iterations: number): KdfParams => ({ algorithm: "pbkdf2-sha256", salt, iterations });
  const codeOf = (kdf: KdfParams) => {
    try {
      checkKdf(kdf);
      return "ok";
    } catch (err) {
      return (err as { code: string }).code;
    }
  };

  test.each<[string, KdfParams, string]>([
    ["the SDK's Argon2id default", { ...DEFAULT_ARGON2ID, salt }, "ok"],
    ["the SDK's PBKDF2 default", { ...DEFAULT_PBKDF2, salt }, "ok"],
    ["Argon2id, 2 passes over 96 MiB (the same memory passes)", argon(2, 98_304), "ok"],
    ["Argon2id, 1 GiB, 10 passes, 16 lanes (the caps)", argon(10, 1_048_576, 16), "ok"],
    ["PBKDF2 at its cap", pbkdf2(2_000_000), "ok"],
    ["Argon2id, 2 passes over 64 MiB", argon(2, 65_536), "KDF_TOO_WEAK"],
    ["Argon2id, 10 passes over 48 MiB (enough passes, too little memory)", argon(10, 49_152), "KDF_TOO_WEAK"],
    ["Argon2id at the contract's floor", argon(2, 19_456), "KDF_TOO_WEAK"],
    ["Argon2id, 1 pass over 1 GiB", argon(1, 1_048_576), "KDF_TOO_WEAK"],
    ["PBKDF2, 599,999 iterations", pbkdf2(599_999), "KDF_TOO_WEAK"],
    ["PBKDF2, 1 iteration", pbkdf2(1), "KDF_TOO_WEAK"],
    ["Argon2id over 1 GiB + 1 KiB", argon(3, 1_048_577), "KDF_UNSUPPORTED"],
    ["Argon2id, 11 passes", argon(11, 65_536), "KDF_UNSUPPORTED"],
    ["Argon2id, 17 lanes", argon(3, 65_536, 17), "KDF_UNSUPPORTED"],
    ["Argon2id, 0 lanes", argon(3, 65_536, 0), "KDF_UNSUPPORTED"],
    ["Argon2id, 1.5 passes", argon(1.5, 131_072), "KDF_UNSUPPORTED"],
    ["PBKDF2 beyond its cap", pbkdf2(2_000_001), "KDF_UNSUPPORTED"],
    ["a 15-byte salt", { ...argon(3, 65_536), salt: Buffer.alloc(15).toString("base64") }, "KDF_UNSUPPORTED"],
    ["a 65-byte salt", { ...argon(3, 65_536), salt: Buffer.alloc(65).toString("base64") }, "KDF_UNSUPPORTED"],
    ["a salt that is not base64", { ...argon(3, 65_536), salt: "not base64!" }, "KDF_UNSUPPORTED"],
    ["an unknown algorithm", { algorithm: "scrypt", salt, iterations: 1 } as unknown as KdfParams, "KDF_UNSUPPORTED"],
  ])("%s: %p -> %s", (_what, kdf, expected) => {
    expect(codeOf(kdf)).toBe(expected);
  });

  test("the floor is the SDK's own default cost, and never below the contract's", () => {
    expect(KDF_FLOOR.argon2id.memoryKiB * 3).toBe(KDF_FLOOR.argon2id.memoryPassesKiB);
    expect(DEFAULT_ARGON2ID.memoryKiB * DEFAULT_ARGON2ID.iterations).toBe(KDF_FLOOR.argon2id.memoryPassesKiB);
    expect(KDF_FLOOR["pbkdf2-sha256"].iterations).toBe(DEFAULT_PBKDF2.iterations);
    expect(KDF_FLOOR.argon2id.memoryKiB).toBeGreaterThanOrEqual(19_456);
    expect(KDF_CAPS.argon2id.memoryKiB).toBe(1_048_576);
  });

  test("no derive function runs with parameters below the floor, whoever provides it (the web vault's worker, a custom one)", async () => {
    const derive = jest.fn(async () => new Uint8Array(32));
    await expect(deriveAccountSecrets("pw", pbkdf2(1), derive)).rejects.toMatchObject({ code: "KDF_TOO_WEAK" });
    expect(derive).not.toHaveBeenCalled();
    await deriveAccountSecrets("pw", pbkdf2(600_000), derive);
    expect(derive).toHaveBeenCalledTimes(1);
  });
});
