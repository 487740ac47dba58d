/**
 * The vault as a WebAuthn authenticator (sdk/passkeys): a passkey it makes registers at a relying
 * party that verifies with @simplewebauthn/server (the library the service and most sites' Node
 * back ends use), its sign-ins verify under the registered public key with the counter moving on,
 * and the refusals a browser would give are given by name.
 */
import { createHash, randomBytes } from "node:crypto";
import { verifyAuthenticationResponse, verifyRegistrationResponse } from "@simplewebauthn/server";
import { assertPasskey, createPasskey, passkeysFor, PasskeyError, type CreationRequest, type Passkey } from "../../../../sdk/passkeys";
import { fromBase64Url, toBase64Url } from "../../../../protocol/encoding";

const ORIGIN = "https://login.example.com";
const request = (over: Partial<CreationRequest> = {}): CreationRequest => ({
  origin: ORIGIN,
  rp: { id: "example.com", name: "Example" },
  user: { id: new Uint8Array(randomBytes(16)), name: "ada@example.com", displayName: "Ada" },
  challenge: new Uint8Array(randomBytes(32)),
  pubKeyCredParams: [
    { type: "public-key", alg: -7 },
    { type: "public-key", alg: -257 },
  ],
  ...over,
});

async function registered(req: CreationRequest) {
  const { passkey, registration } = await createPasskey(req, []);
  const verdict = await verifyRegistrationResponse({
    response: registration,
    expectedChallenge: toBase64Url(req.challenge),
    expectedOrigin: req.origin,
    expectedRPID: req.rp.id ?? new URL(req.origin).hostname,
    requireUserVerification: true,
  });
  expect(verdict.verified).toBe(true);
  return { passkey, info: verdict.registrationInfo! };
}

async function signIn(passkey: Passkey, info: Awaited<ReturnType<typeof registered>>["info"], counter: number, origin = ORIGIN) {
  const challenge = new Uint8Array(randomBytes(32));
  const { assertion, counter: next } = await assertPasskey({ origin, rpId: passkey.rpId, challenge }, passkey);
  const verdict = await verifyAuthenticationResponse({
    response: assertion,
    expectedChallenge: toBase64Url(challenge),
    expectedOrigin: origin,
    expectedRPID: passkey.rpId,
    credential: { id: info.credential.id, publicKey: info.credential.publicKey, counter },
    requireUserVerification: true,
  });
  return { verdict, next, assertion };
}

test.each([
  ["ES256", [-7, -257], -7],
  ["EdDSA", [-8], -8],
] as const)("a %s passkey registers at the site and signs in there, its counter moving on", async (algorithm, algs, cose) => {
  const req = request({ pubKeyCredParams: algs.map((alg) => ({ type: "public-key", alg })) });
  const { passkey, info } = await registered(req);
  expect(passkey).toMatchObject({ algorithm, rpId: "example.com", userName: "ada@example.com", counter: 0, discoverable: true });
  expect(passkey.userHandle).toBe(toBase64Url(req.user.id));
  expect(info.credential.id).toBe(passkey.credentialId);
  expect(info.credentialDeviceType).toBe("multiDevice"); // BE: a synced passkey
  expect(info.credentialBackedUp).toBe(true);
  expect(info.userVerified).toBe(true);
  expect(info.fmt).toBe("none");
  // The COSE key's algorithm is the one the site asked for.
  expect(info.credential.publicKey[0]).toBeGreaterThan(0xa0);
  expect(Buffer.from(info.credential.publicKey).includes(Buffer.from([0x03, cose === -7 ? 0x26 : 0x27]))).toBe(true);

  const first = await signIn(passkey, info, 0);
  expect(first.verdict.verified).toBe(true);
  expect(first.verdict.authenticationInfo.newCounter).toBe(1);
  expect(first.assertion.response.userHandle).toBe(passkey.userHandle);
  const second = await signIn({ ...passkey, counter: first.next }, info, first.next);
  expect(second.verdict.authenticationInfo.newCounter).toBe(2);
  // A sign-in that did not move the counter on is what a site takes for a cloned key.
  await expect(signIn(passkey, info, first.next)).rejects.toThrow(/counter/i);
});

test("a passkey's sign-in does not verify under another passkey's key, nor for another challenge", async () => {
  const a = await registered(request());
  const b = await registered(request());
  expect((await signIn(a.passkey, b.info, 0)).verdict.verified).toBe(false);
  const challenge = new Uint8Array(randomBytes(32));
  const { assertion } = await assertPasskey({ origin: ORIGIN, rpId: "example.com", challenge }, a.passkey);
  await expect(
    verifyAuthenticationResponse({
      response: assertion,
      expectedChallenge: toBase64Url(new Uint8Array(randomBytes(32))),
      expectedOrigin: ORIGIN,
      expectedRPID: "example.com",
      credential: { id: a.info.credential.id, publicKey: a.info.credential.publicKey, counter: 0 },
    }),
  ).rejects.toThrow(/challenge/i);
});

test("the authenticator data is what WebAuthn fixes: the rpId's hash, UP UV BE BS, the counter", async () => {
  const { passkey } = await registered(request());
  const { assertion } = await assertPasskey(
    { origin: ORIGIN, rpId: "example.com", challenge: new Uint8Array(16) },
    { ...passkey, counter: 41 },
  );
  const data = Buffer.from(fromBase64Url(assertion.response.authenticatorData));
  expect(data.subarray(0, 32).toString("hex")).toBe(createHash("sha256").update("example.com").digest("hex"));
  expect(data[32]).toBe(0x1d);
  expect(data.readUInt32BE(33)).toBe(42);
  // A passkey made without BE (KeePassXC before 2.7.12) keeps signing without it: a site may refuse a changed BE.
  const old = await assertPasskey(
    { origin: ORIGIN, rpId: "example.com", challenge: new Uint8Array(16) },
    { ...passkey, backupEligible: false, backupState: false },
  );
  expect(fromBase64Url(old.assertion.response.authenticatorData)[32]).toBe(0x05);
  expect(data.length).toBe(37);
  expect(JSON.parse(Buffer.from(fromBase64Url(assertion.response.clientDataJSON)).toString())).toEqual({
    type: "webauthn.get",
    challenge: "AAAAAAAAAAAAAAAAAAAAAA",
    origin: ORIGIN,
    crossOrigin: false,
  });
});

const refused = async (p: Promise<unknown>, code: string) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PasskeyError);
  expect((err as PasskeyError).code).toBe(code);
};

test("a site's creation request the vault refuses, by name", async () => {
  await refused(createPasskey(request({ pubKeyCredParams: [{ type: "public-key", alg: -257 }] }), []), "NO_ALGORITHM");
  await refused(createPasskey(request({ challenge: new Uint8Array(8) }), []), "BAD_REQUEST");
  await refused(createPasskey(request({ origin: "http://login.example.com" }), []), "INSECURE_ORIGIN");
  await refused(createPasskey(request({ origin: "https://example.org" }), []), "RP_ID_MISMATCH");
  const { passkey } = await registered(request());
  const again = request({ excludeCredentials: [{ id: fromBase64Url(passkey.credentialId) }] });
  await refused(createPasskey(again, [passkey]), "EXCLUDED");
  // The same credential id listed by another site's request excludes nothing here.
  await expect(createPasskey(again, [{ ...passkey, rpId: "other.example" }])).resolves.toBeDefined();
  expect((await createPasskey(request({ residentKey: "discouraged" }), [])).passkey.discoverable).toBe(false);
});

test("which passkeys may answer a sign-in: the relying party's, named by the site, or discoverable when it names none", async () => {
  const base = (await registered(request())).passkey;
  const mine = { ...base, credentialId: "AQID" };
  const hidden = { ...base, credentialId: "BAUG", discoverable: false };
  const other = { ...base, credentialId: "BwgJ", rpId: "example.org" };
  const all = [mine, hidden, other];
  const challenge = new Uint8Array(16);
  expect(passkeysFor({ origin: ORIGIN, challenge }, all)).toEqual([]); // rpId defaults to the host, login.example.com
  expect(passkeysFor({ origin: ORIGIN, rpId: "example.com", challenge }, all)).toEqual([mine]);
  expect(passkeysFor({ origin: ORIGIN, rpId: "example.com", challenge, allowCredentials: [{ id: fromBase64Url("BAUG") }] }, all)).toEqual([
    hidden,
  ]);
  expect(passkeysFor({ origin: "https://example.org", challenge, allowCredentials: [{ id: fromBase64Url("BwgJ") }] }, all)).toEqual([
    other,
  ]);
  await refused(assertPasskey({ origin: "https://example.org", challenge }, mine), "NO_PASSKEY");
  await refused(assertPasskey({ origin: "https://evil-example.com", rpId: "example.com", challenge }, mine), "RP_ID_MISMATCH");
  await refused(assertPasskey({ origin: ORIGIN, rpId: "example.com", challenge }, { ...mine, privateKey: "AAAA" }), "BAD_KEY");
});
