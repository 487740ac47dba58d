/**
 * Passkeys moved in and out without loss (sdk/transfer/passkeys.ts): a real Bitwarden export with
 * passkeys (KeePassXC's test data) read field by field, its passkey signing a sign-in that verifies
 * under the key's own public half; written back as Bitwarden holds it, field for field; KeePassXC's
 * `KPEX_PASSKEY_*` attributes (with KeePassXC's own test key) read and written back, its BE flag
 * kept; and every passkey through our encrypted export unchanged.
 */
import { createHash, createPrivateKey, createPublicKey, createVerify, generateKeyPairSync } from "node:crypto";
import * as kdbxweb from "kdbxweb";
import { fixture, named, roundTrip } from "./real-files";
import { readImport } from "../../../../sdk/transfer";
import { passkeyFromBitwarden, passkeyToBitwarden, passkeyToKeePassXC, KEEPASSXC_PASSKEY } from "../../../../sdk/transfer/passkeys";
import { assertPasskey, createPasskey, type Passkey } from "../../../../sdk/passkeys";
import { fromBase64Url } from "../../../../protocol/encoding";

const BW_FILE = "bitwarden/keepassxc-bitwarden_passkey_export.json";
const source = () => JSON.parse(new TextDecoder().decode(fixture(BW_FILE))) as { items: Array<{ login: { fido2Credentials: any[] } }> };

/** A sign-in by `passkey` for `origin`, verified with node:crypto under the public half of its private key. */
async function signsFor(passkey: Passkey, origin: string): Promise<Buffer> {
  const { assertion } = await assertPasskey({ origin, rpId: passkey.rpId, challenge: new Uint8Array(32).fill(9) }, passkey);
  const authData = Buffer.from(fromBase64Url(assertion.response.authenticatorData));
  const clientData = Buffer.from(fromBase64Url(assertion.response.clientDataJSON));
  const publicKey = createPublicKey(
    createPrivateKey({ key: Buffer.from(fromBase64Url(passkey.privateKey)), format: "der", type: "pkcs8" }),
  );
  const verifier = createVerify("SHA256");
  verifier.update(Buffer.concat([authData, createHash("sha256").update(clientData).digest()]));
  expect(verifier.verify(publicKey, Buffer.from(fromBase64Url(assertion.response.signature)))).toBe(true);
  return authData;
}

describe("Bitwarden's JSON with passkeys (KeePassXC's test file)", () => {
  test("each login arrives with its passkey, field by field, and nothing is listed as left out", async () => {
    const parsed = await readImport(fixture(BW_FILE));
    expect(parsed.items).toHaveLength(2);
    expect(parsed.partial).toEqual([]);
    expect(parsed.skipped).toEqual([]);
    for (const name of ["webauthn.io", "webauthn.io b64"]) {
      const item = named(parsed, name);
      expect(item.fields).toEqual({ username: "KPXC_BITWARDEN" });
      expect(item.urls).toEqual([{ url: "https://webauthn.io/", match: "domain" }]);
      expect(item.passkeys).toEqual([
        {
          // The GUID a3e15f8b-27c1-42ae-90cf-a615ad87854f and b64.o-FfiyfBQq6Qz6YVrYeFTw name the same 16 bytes.
          credentialId: "o-FfiyfBQq6Qz6YVrYeFTw",
          rpId: "webauthn.io",
          rpName: "webauthn.io",
          userHandle: "aTFtdmFnOHYtS2dxVEJ0by1rSFpLWGg0enlTVC1iUVJReDZ5czJXa3c2aw",
          userName: "KPXC_BITWARDEN",
          userDisplayName: "KPXC_BITWARDEN",
          algorithm: "ES256",
          privateKey:
            "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmr4GQQjerojFuf0ZouOuUllMvAwxZSZAfB6gwDYcLiehRANCAAT0WR5zVSp6ieusvjkLkzaGc7fjGBmwpiuLPxR_d-ZjqMI9L2DKh-takp6wGt2x0n4jzr1KA352NZg0vjZX9CHh",
          counter: 0,
          discoverable: true,
          backupEligible: true,
          backupState: true,
          createdAt: "2024-10-23T16:38:08.617Z",
        },
      ]);
    }
  });

  test("the imported passkey signs for webauthn.io with the key Bitwarden held, as a Bitwarden passkey signs (UP UV BE BS)", async () => {
    const item = named(await readImport(fixture(BW_FILE)), "webauthn.io");
    const authData = await signsFor(item.passkeys![0]!, "https://webauthn.io");
    expect(authData.subarray(0, 32)).toEqual(createHash("sha256").update("webauthn.io").digest());
    expect(authData[32]).toBe(0x1d);
  });

  test("written back as Bitwarden holds it: every field of the file's passkey, the same", async () => {
    const [first, second] = source().items.map((i) => i.login.fido2Credentials[0]);
    expect(passkeyToBitwarden(passkeyFromBitwarden(first) as Passkey)).toEqual(first);
    // The b64. id names 16 bytes, which Bitwarden's clients write as a GUID: the same id.
    expect(passkeyToBitwarden(passkeyFromBitwarden(second) as Passkey)).toEqual({ ...second, credentialId: first.credentialId });
  });

  test("a passkey Bitwarden's file holds that passkeys here cannot is listed with its reason, and the login still arrives", async () => {
    const doc = source();
    doc.items[0]!.login.fido2Credentials[0].keyCurve = "P-384";
    doc.items[1]!.login.fido2Credentials[0].keyValue = "not base64url!";
    const parsed = await readImport(new TextEncoder().encode(JSON.stringify(doc)));
    expect(parsed.items.map((i) => i.passkeys)).toEqual([undefined, undefined]);
    expect(parsed.partial).toEqual([
      { name: "webauthn.io", left: [{ part: "passkey for webauthn.io", why: "a ECDSA P-384 key, which passkeys here do not hold" }] },
      { name: "webauthn.io b64", left: [{ part: "passkey for webauthn.io", why: "a passkey's privateKey is not base64url" }] },
    ]);
  });

  test("a passkey Bitwarden cannot hold is not written as one it can", async () => {
    const p = passkeyFromBitwarden(source().items[0]!.login.fido2Credentials[0]) as Passkey;
    expect(passkeyToBitwarden({ ...p, algorithm: "EdDSA" })).toMatch(/only ES256/);
    expect(passkeyToBitwarden({ ...p, backupEligible: false, backupState: false })).toMatch(/BE flag/);
  });

  test("through our encrypted export and back, every passkey field is the same", async () => {
    const parsed = await readImport(fixture(BW_FILE));
    const back = await roundTrip(parsed);
    expect(back.map((i) => i.passkeys)).toEqual(parsed.items.map((i) => i.passkeys));
  });
});

// KeePassXC's own test key (tests/TestPasskeys.cpp, testLoadingECPrivateKeyFromPem), written on one line as that test writes it.
const KEEPASSXC_EC_PEM =
  "-----BEGIN PRIVATE KEY-----" +
  "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5DX2R6I37nMSZqCp" +
  "XfHlE3UeitkGGE03FqGsdfxIBoOhRANCAAQG7K80W2KRYW0ZWQOmUCrKMcSVqGnl" +
  "8Ifl1LgyzQiF3eLuf+kPDukdB4NKAwnbQiSxC9Ml/xgy4VOZtx1CBOeD" +
  "-----END PRIVATE KEY-----";

describe("KeePassXC's passkey attributes", () => {
  async function database(entries: Array<Record<string, string>>): Promise<Uint8Array> {
    const db = kdbxweb.Kdbx.create(new kdbxweb.Credentials(kdbxweb.ProtectedValue.fromString("pw")), "KeePassXC");
    db.setVersion(4);
    db.setKdf(kdbxweb.Consts.KdfId.Aes);
    for (const fields of entries) {
      const entry = db.createEntry(db.getDefaultGroup());
      entry.times.creationTime = new Date("2025-03-01T10:00:00.000Z");
      for (const [k, v] of Object.entries(fields))
        entry.fields.set(k, k.startsWith("KPEX_PASSKEY_") && k !== KEEPASSXC_PASSKEY.rpId ? kdbxweb.ProtectedValue.fromString(v) : v);
    }
    return new Uint8Array(await db.save());
  }

  test("an entry KeePassXC made before 2.7.12 (no flags) arrives with its passkey, signing without BE as it always did", async () => {
    const parsed = await readImport(
      await database([
        {
          Title: "webauthn.io",
          UserName: "kpxc",
          URL: "https://webauthn.io",
          [KEEPASSXC_PASSKEY.credentialId]: "yrzFJ5lwcpTwYMOdXSmxF5b5cYQlqBMzbbU_d-oFLO8",
          [KEEPASSXC_PASSKEY.privateKey]: KEEPASSXC_EC_PEM,
          [KEEPASSXC_PASSKEY.rpId]: "webauthn.io",
          [KEEPASSXC_PASSKEY.userName]: "kpxc",
          [KEEPASSXC_PASSKEY.userHandle]: "dGVzdC11c2VyLWhhbmRsZQ",
        },
      ]),
      { password: "pw" },
    );
    const item = named(parsed, "webauthn.io");
    expect(item.custom).toBeUndefined(); // the attributes are the passkey, not custom fields
    const passkey = item.passkeys![0]!;
    expect(passkey).toMatchObject({
      credentialId: "yrzFJ5lwcpTwYMOdXSmxF5b5cYQlqBMzbbU_d-oFLO8",
      rpId: "webauthn.io",
      userName: "kpxc",
      userHandle: "dGVzdC11c2VyLWhhbmRsZQ",
      algorithm: "ES256",
      counter: 0,
      backupEligible: false,
      backupState: false,
      createdAt: "2025-03-01T10:00:00.000Z",
    });
    const authData = await signsFor(passkey, "https://webauthn.io");
    // KeePassXC's own authenticator data for this key (the same test): the rpId's hash, UP UV, no BE.
    expect(authData.subarray(0, 33)).toEqual(
      Buffer.from(fromBase64Url("dKbqkhPJnC90siSSsyDPQCYqlMGpUKA5fyklC2CEHvAFAAAAAA").subarray(0, 33)),
    );
  });

  test("a passkey written as KeePassXC attributes and read back is the same passkey, flags included", async () => {
    const { passkey } = await createPasskey(
      {
        origin: "https://app.example.com",
        rp: { id: "example.com", name: "Example" },
        user: { id: new Uint8Array([1, 2, 3]), name: "ada", displayName: "ada" },
        challenge: new Uint8Array(16),
        pubKeyCredParams: [{ type: "public-key", alg: -8 }],
      },
      [],
      new Date("2025-03-01T10:00:00.000Z"),
    );
    const attributes = passkeyToKeePassXC(passkey);
    expect(attributes[KEEPASSXC_PASSKEY.backupEligible]).toBe("1");
    const parsed = await readImport(await database([{ Title: "example", UserName: "ada", ...attributes }]), { password: "pw" });
    const back = named(parsed, "example").passkeys![0]!;
    // What KeePassXC keeps no field for: the site's display names (its rpId and user name stand in).
    expect(back).toEqual({ ...passkey, rpName: "example.com", counter: 0 });
    expect(passkeyToKeePassXC(back)).toEqual(attributes);
  });

  test("an RSA passkey (which KeePassXC can hold) is listed with its reason; its attributes stay as custom fields", async () => {
    const { privateKey: rsaPem } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
    });
    const parsed = await readImport(
      await database([
        {
          Title: "rsa site",
          [KEEPASSXC_PASSKEY.credentialId]: "AQID",
          [KEEPASSXC_PASSKEY.privateKey]: rsaPem,
          [KEEPASSXC_PASSKEY.rpId]: "rsa.example",
        },
      ]),
      { password: "pw" },
    );
    expect(parsed.partial).toEqual([
      {
        name: "rsa site",
        left: [{ part: "passkey for rsa.example", why: "its key is RSA or another kind passkeys here do not hold (ES256 and EdDSA)" }],
      },
    ]);
    expect(named(parsed, "rsa site").custom?.map((c) => c.name)).toContain(KEEPASSXC_PASSKEY.privateKey);
  });
});
