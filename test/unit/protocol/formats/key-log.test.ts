/**
 * The key log without a server: the published test vectors (README, "Key log"), reproduced by the
 * SDK's WebCrypto code and by node:crypto; a log verified on its own, and what it refuses. The
 * server's rules for a rotation: test/unit/lib/domain/accounts/key-rotation.test.ts.
 */
import { createPrivateKey, sign } from "node:crypto";
import vectors from "../../../../protocol/vectors/key-log-vectors.json";
import { canonicalJson } from "../../../../protocol/canonical";
import {
  keyLogEntryHash,
  keyLogSigningBytes,
  parseKeyLogEntry,
  signKeyLogStep,
  verifyKeyLog,
  KeyLogError,
  type KeyLogEntry,
} from "../../../../protocol/formats/key-log";
import { RosterLinkError } from "../../../../protocol/formats/links";
import { importEd25519PrivateKey } from "../../../../protocol/crypto/primitives";

const PKCS8_PREFIX = "302e020100300506032b657004220420";
const nodeKey = (seedHex: string) => createPrivateKey({ key: Buffer.from(PKCS8_PREFIX + seedHex, "hex"), format: "der", type: "pkcs8" });
const webKey = (seedHex: string) => importEd25519PrivateKey(new Uint8Array(Buffer.from(PKCS8_PREFIX + seedHex, "hex")));
const [v1, v2] = vectors.entries.map((e) => e.entry as KeyLogEntry) as [KeyLogEntry, KeyLogEntry];
const [seed1, seed2] = vectors.signingSeedsHex as [string, string];
const userId = v1.userId;

async function refusedLog(entries: unknown[]): Promise<string> {
  const err = await verifyKeyLog(userId, entries).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KeyLogError);
  return (err as Error).message;
}

describe("key log test vectors", () => {
  test("entry 1 and a rotation: canonical bytes, hashes and both signatures, on both code paths", async () => {
    expect(canonicalJson(v1)).toBe(vectors.entries[0]!.canonical);
    expect(await keyLogEntryHash(v1)).toBe(vectors.entries[0]!.hash);
    expect(v2.prev).toBe(vectors.entries[0]!.hash);
    const step = vectors.entries[1]!;
    expect(canonicalJson(v2)).toBe(step.canonical);
    expect(await keyLogEntryHash(v2)).toBe(step.hash);
    const signing = keyLogSigningBytes(v2);
    expect(Buffer.from(signing).toString("utf8")).toBe(step.signingBytes);
    expect(step.signingBytes!.startsWith("vault-key-log/v1\n")).toBe(true);
    // Ed25519 is deterministic: the old key's seed gives `sig`, the new key's `selfSig`, byte for byte.
    expect(sign(null, signing, nodeKey(seed1)).toString("base64")).toBe(v2.sig);
    expect(sign(null, signing, nodeKey(seed2)).toString("base64")).toBe(v2.selfSig);
    const again = await signKeyLogStep(v1, { ...v2, at: v2.at! }, await webKey(seed1), await webKey(seed2));
    expect(again).toEqual(v2);
    expect((await verifyKeyLog(userId, [v1, v2])).map((e) => e.hash)).toEqual([vectors.entries[0]!.hash, step.hash]);
  });

  test("a log is refused when a step is not signed by the key before it, is out of place, or reuses keys", async () => {
    expect(await refusedLog([])).toMatch(/1 to 100 entries/);
    expect(await refusedLog([v2])).toMatch(/does not start with its version 1/);
    expect(await refusedLog([v1, { ...v2, sig: v2.selfSig }])).toMatch(/\(sig\)/);
    expect(await refusedLog([v1, { ...v2, selfSig: v2.sig }])).toMatch(/\(selfSig\)/);
    expect(await refusedLog([v1, { ...v2, prev: "f".repeat(64) }])).toMatch(/\(prev\)/);
    expect(await refusedLog([v1, { ...v2, version: 3 }])).toMatch(/\(version\)/);
    expect(await refusedLog([v1, { ...v2, userId: "1b9a4c5e-2f3d-4a1b-9c8d-7e6f5a4b3c2d" }])).toMatch(/\(userId\)/);
    // Back to the first keys, signed as a step by both keys involved: keys used before.
    const back = await signKeyLogStep(v2, { ...v1, at: "2026-11-24T13:00:00.000Z" }, await webKey(seed2), await webKey(seed1));
    expect(await refusedLog([v1, v2, back])).toMatch(/\(publicKey\): the keys were used before/);
    expect(await refusedLog([v1, v2, back].map((e, i) => (i === 0 ? { ...e, publicKeySignature: v2.publicKeySignature } : e)))).toMatch(
      /not signed by their own signing key/,
    );
  });

  test.each<[string, unknown, string]>([
    ["an unknown field", { ...v2, extra: 1 }, "extra"],
    ["entry 1 with signatures", { ...v1, sig: v2.sig }, "sig"],
    ["a step without its own signature", { ...v2, selfSig: undefined }, "selfSig"],
    ["a step at no real date", { ...v2, at: "2026-13-40T00:00:00.000Z" }, "at"],
    ["entry 1 not at the chain's start", { ...v1, prev: "1".repeat(64) }, "prev"],
    ["a key that is not base64", { ...v2, publicKey: "not base64!" }, "publicKey"],
    [
      "a signing key without its padding (base64 other clients read otherwise)",
      { ...v2, signingPublicKey: v2.signingPublicKey.replace(/=$/, "") },
      "signingPublicKey",
    ],
    ["a signing key with stray low bits", { ...v2, signingPublicKey: v2.signingPublicKey.replace(/.=$/, "B=") }, "signingPublicKey"],
    ["a signature of another size", { ...v2, publicKeySignature: v2.signingPublicKey }, "publicKeySignature"],
  ])("the form: %s is refused", (_what, raw, field) => {
    let err: unknown;
    try {
      parseKeyLogEntry(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RosterLinkError);
    expect((err as RosterLinkError).field).toBe(field);
  });
});
