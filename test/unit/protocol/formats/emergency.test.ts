/**
 * Emergency access's wire format without a server (docs/protocol/emergency-access.md;
 * protocol/vectors/emergency-vectors.json): the signed bytes of a grant and the hash of its wrapped
 * key, reproduced by the SDK's code and independently with node:crypto; the server verifies the
 * signature; and the context keeps a grant's signature from passing as any other statement's.
 */
import { createPrivateKey, createPublicKey, sign } from "node:crypto";
import vectors from "../../../../protocol/vectors/emergency-vectors.json";
import { signatureVerifies } from "../../../../lib/domain/accounts/keys";
import { GRANT_CONTEXT, grantBytes, grantStatementOf, type GrantStatement } from "../../../../protocol/formats/emergency";

const key = createPrivateKey({
  key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(vectors.signingSeedHex, "hex")]),
  format: "der",
  type: "pkcs8",
});
const publicKey = Buffer.from(createPublicKey(key).export({ format: "der", type: "spki" }).subarray(-32)).toString("base64");
const statement = vectors.grant.statement as GrantStatement;

test("a grant's signed bytes and signature, by the SDK and node:crypto; the server verifies it", () => {
  const bytes = grantBytes(statement);
  expect(Buffer.from(bytes).toString("utf8")).toBe(vectors.grant.signed);
  expect(sign(null, bytes, key).toString("base64")).toBe(vectors.grant.signature);
  expect(signatureVerifies(Buffer.from(bytes), Buffer.from(vectors.grant.signature, "base64"), publicKey)).toBe(true);
});

test("the statement of a stored grant hashes its wrapped key (SHA-256, hex)", async () => {
  const { wrapped: _w, ...fields } = statement;
  expect(await grantStatementOf({ ...fields, wrappedKey: vectors.grant.wrappedKey })).toEqual(statement);
});

test("each field is bound: a changed level, wait, person or key fails the signature", () => {
  const signature = Buffer.from(vectors.grant.signature, "base64");
  for (const change of [
    { level: "read" },
    { waitHours: 1 },
    { granteeId: statement.grantorId },
    { wrapped: "0".repeat(64) },
    { kdfVersion: 1 },
  ]) {
    const bytes = grantBytes({ ...statement, ...change } as GrantStatement);
    expect(signatureVerifies(Buffer.from(bytes), signature, publicKey)).toBe(false);
  }
});

test("the context line: a grant's signature verifies under no other statement's context", () => {
  expect(vectors.grant.signed.startsWith(GRANT_CONTEXT)).toBe(true);
  const signature = Buffer.from(vectors.grant.signature, "base64");
  const body = vectors.grant.signed.slice(GRANT_CONTEXT.length);
  for (const other of ["vault-recovery-enrolment/v1\n", "vault-recovery-approval/v1\n", "vault-key-statement/v1\n"])
    expect(signatureVerifies(Buffer.from(other + body), signature, publicKey)).toBe(false);
});
