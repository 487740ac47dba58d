/**
 * The vault as a WebAuthn authenticator: a passkey made for a site, and a sign-in answered with
 * one, in the byte formats WebAuthn Level 3 fixes (§6.1 authenticator data, §6.5 attestation,
 * §5.8.1 client data), so a relying party verifies them as it verifies a platform authenticator's.
 *
 * - Made: a new key (ES256 unless the site asks only for EdDSA), a random 16-byte credential id,
 *   "none" attestation with this vault's AAGUID, flags UP, UV (the vault was unlocked, which is the
 *   user verification), BE and BS (the passkey is synced: every device of every member who may open
 *   the item holds it), AT. A passkey brought in keeps the BE and BS it was made with.
 * - Used: the passkeys of the relying party the page may claim (relying-party.ts), those the site
 *   names, or, when it names none, the discoverable ones; the counter moves on by one each use, and
 *   the caller saves the item with it.
 *
 * Nothing here touches the network or storage: the clients (the extension) decide where the item
 * is saved and ask the person first.
 */
import { encodeCBOR } from "@levischuck/tiny-cbor";
import type { CryptoKey } from "../../protocol/crypto/primitives";
import { concatBytes as concat, fromBase64Url, toBase64Url, utf8, type Bytes } from "../../protocol/encoding";
import { PasskeyError } from "./errors";
import { COSE_ALGORITHM, type Passkey, type PasskeyAlgorithm } from "./passkey";
import { relyingPartyFor } from "./relying-party";

/** This vault's authenticator model id, in every attestation (with "none" attestation it names the kind, not the device). */
export const VAULT_AAGUID = "6f1c5e1a-2b7d-4c3e-9a51-0d8e7f4b2c19";

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;
/** UP and UV, with the passkey's own BE and BS. */
const flagsOf = (p: Passkey): number => FLAG_UP | FLAG_UV | (p.backupEligible ? FLAG_BE : 0) | (p.backupState ? FLAG_BS : 0);

/** What `navigator.credentials.create({ publicKey })` asked for, bytes as bytes, with the page's origin. */
export interface CreationRequest {
  origin: string;
  rp: { id?: string; name: string };
  user: { id: Uint8Array; name: string; displayName: string };
  challenge: Uint8Array;
  pubKeyCredParams: ReadonlyArray<{ type: string; alg: number }>;
  excludeCredentials?: ReadonlyArray<{ id: Uint8Array }>;
  /** `authenticatorSelection.residentKey`; "discouraged" makes a passkey the site must name. */
  residentKey?: string;
}

/** What `navigator.credentials.get({ publicKey })` asked for, with the page's origin. */
export interface AssertionRequest {
  origin: string;
  rpId?: string;
  challenge: Uint8Array;
  allowCredentials?: ReadonlyArray<{ id: Uint8Array }>;
}

/** `PublicKeyCredential.toJSON()` of a registration (WebAuthn L3 §5.1, `RegistrationResponseJSON`). */
export interface RegistrationJSON {
  id: string;
  rawId: string;
  type: "public-key";
  authenticatorAttachment: "platform";
  clientExtensionResults: { credProps: { rk: boolean } };
  response: {
    clientDataJSON: string;
    attestationObject: string;
    authenticatorData: string;
    publicKey: string;
    publicKeyAlgorithm: number;
    transports: string[];
  };
}

/** `PublicKeyCredential.toJSON()` of a sign-in (`AuthenticationResponseJSON`). */
export interface AssertionJSON {
  id: string;
  rawId: string;
  type: "public-key";
  authenticatorAttachment: "platform";
  clientExtensionResults: Record<string, never>;
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string };
}

type ImportAlgorithm = Parameters<typeof crypto.subtle.importKey>[2];
type SignAlgorithm = Parameters<typeof crypto.subtle.sign>[0];
/** The public half of a key as `exportKey("jwk")` gives it: its coordinates. */
interface PublicJwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
}

const IMPORT: Record<PasskeyAlgorithm, ImportAlgorithm> = {
  ES256: { name: "ECDSA", namedCurve: "P-256" },
  EdDSA: { name: "Ed25519" },
};
const SIGN: Record<PasskeyAlgorithm, SignAlgorithm> = {
  ES256: { name: "ECDSA", hash: "SHA-256" },
  EdDSA: { name: "Ed25519" },
};

const uint32 = (n: number): Bytes => new Uint8Array([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
const sha256 = async (bytes: Uint8Array): Promise<Bytes> => new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes)));
const aaguidBytes = (): Bytes =>
  new Uint8Array(
    VAULT_AAGUID.replace(/-/g, "")
      .match(/../g)!
      .map((h) => parseInt(h, 16)),
  );

/** Client data as Chromium serializes it (WebAuthn L3 §5.8.1.1: type, challenge, origin, crossOrigin, in that order). */
export function clientDataJSON(type: "webauthn.create" | "webauthn.get", challenge: Uint8Array, origin: string): string {
  return `{"type":"${type}","challenge":"${toBase64Url(challenge)}","origin":${JSON.stringify(origin)},"crossOrigin":false}`;
}

/** The passkey's private key, for signing; its public half as JWK coordinates. */
async function keysOf(passkey: Passkey): Promise<{ privateKey: CryptoKey; jwk: PublicJwk }> {
  try {
    const privateKey = await crypto.subtle.importKey("pkcs8", fromBase64Url(passkey.privateKey), IMPORT[passkey.algorithm], true, ["sign"]);
    return { privateKey, jwk: (await crypto.subtle.exportKey("jwk", privateKey)) as PublicJwk };
  } catch {
    throw new PasskeyError("BAD_KEY", `the passkey for ${passkey.rpId} holds no ${passkey.algorithm} private key`);
  }
}

/** The public key as COSE (RFC 9053 §2.1 for EC2 P-256, RFC 8037 via RFC 9053 §2.2 for OKP Ed25519), CBOR-encoded. */
export async function cosePublicKey(passkey: Passkey): Promise<Bytes> {
  const { jwk } = await keysOf(passkey);
  const x = fromBase64Url(jwk.x!);
  const map =
    passkey.algorithm === "ES256"
      ? new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, x],
          [-3, fromBase64Url(jwk.y!)],
        ])
      : new Map<number, number | Uint8Array>([
          [1, 1],
          [3, -8],
          [-1, 6],
          [-2, x],
        ]);
  return new Uint8Array(encodeCBOR(map));
}

/** The public key as SPKI DER (what `AuthenticatorAttestationResponse.getPublicKey()` gives). */
async function spkiPublicKey(passkey: Passkey): Promise<Bytes> {
  const { jwk } = await keysOf(passkey);
  const pub = await crypto.subtle.importKey("jwk", { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, IMPORT[passkey.algorithm], true, []);
  return new Uint8Array(await crypto.subtle.exportKey("spki", pub));
}

/** ECDSA's raw `r || s` as WebAuthn wants it: an ASN.1 DER `SEQUENCE { INTEGER r, INTEGER s }`. */
export function derSignature(raw: Uint8Array): Bytes {
  const integer = (half: Uint8Array): Bytes => {
    let i = 0;
    while (i < half.length - 1 && half[i] === 0) i++;
    const body = half[i]! & 0x80 ? concat(new Uint8Array([0]), half.subarray(i)) : new Uint8Array(half.subarray(i));
    return concat(new Uint8Array([0x02, body.length]), body);
  };
  const seq = concat(integer(raw.subarray(0, 32)), integer(raw.subarray(32)));
  return concat(new Uint8Array([0x30, seq.length]), seq);
}

/** The authenticator data of a registration of `passkey` (§6.1, with attested credential data §6.5.1). */
export async function registrationAuthenticatorData(passkey: Passkey): Promise<Bytes> {
  const id = fromBase64Url(passkey.credentialId);
  return concat(
    await sha256(utf8(passkey.rpId)),
    new Uint8Array([flagsOf(passkey) | FLAG_AT]),
    uint32(passkey.counter),
    aaguidBytes(),
    new Uint8Array([id.length >> 8, id.length & 255]),
    id,
    await cosePublicKey(passkey),
  );
}

/** What a page gets back from `create` for `passkey`, made for `request` (its rpId already decided). */
export async function registrationFor(passkey: Passkey, request: Pick<CreationRequest, "origin" | "challenge">): Promise<RegistrationJSON> {
  const authData = await registrationAuthenticatorData(passkey);
  const attestationObject = new Uint8Array(
    encodeCBOR(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ["fmt", "none"],
        ["attStmt", new Map<string, string>()],
        ["authData", authData],
      ]),
    ),
  );
  return {
    id: passkey.credentialId,
    rawId: passkey.credentialId,
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: { credProps: { rk: passkey.discoverable } },
    response: {
      clientDataJSON: toBase64Url(utf8(clientDataJSON("webauthn.create", request.challenge, request.origin))),
      attestationObject: toBase64Url(attestationObject),
      authenticatorData: toBase64Url(authData),
      publicKey: toBase64Url(await spkiPublicKey(passkey)),
      publicKeyAlgorithm: COSE_ALGORITHM[passkey.algorithm],
      transports: ["hybrid", "internal"],
    },
  };
}

/** The first algorithm of the site's list that a passkey here can hold, or `NO_ALGORITHM`. */
function algorithmFor(params: CreationRequest["pubKeyCredParams"]): PasskeyAlgorithm {
  const list = params.length === 0 ? [{ type: "public-key", alg: -7 }] : params; // none listed: ES256 and RS256 by default (§5.4)
  for (const p of list) {
    if (p.type !== "public-key") continue;
    if (p.alg === -7) return "ES256";
    if (p.alg === -8) return "EdDSA";
  }
  throw new PasskeyError("NO_ALGORITHM", "the site asks for no algorithm a vault passkey has (ES256 or EdDSA)");
}

/**
 * A new passkey for the page's request, and the answer to give the page. `existing` are the
 * passkeys the person can open: one the site lists in `excludeCredentials` for this relying party
 * refuses with `EXCLUDED` (the account has a passkey here already).
 */
export async function createPasskey(
  request: CreationRequest,
  existing: readonly Passkey[],
  now: Date = new Date(),
): Promise<{ passkey: Passkey; registration: RegistrationJSON }> {
  const rpId = relyingPartyFor(request.origin, request.rp.id);
  if (request.challenge.length < 16) throw new PasskeyError("BAD_REQUEST", "the site's challenge is shorter than 16 bytes");
  if (request.user.id.length < 1 || request.user.id.length > 64)
    throw new PasskeyError("BAD_REQUEST", "the site's user id is not 1 to 64 bytes");
  const algorithm = algorithmFor(request.pubKeyCredParams);
  const excluded = new Set((request.excludeCredentials ?? []).map((c) => toBase64Url(c.id)));
  if (existing.some((p) => p.rpId === rpId && excluded.has(p.credentialId)))
    throw new PasskeyError("EXCLUDED", `the vault holds a passkey for this account at ${rpId} already`);
  const pair = (await crypto.subtle.generateKey(IMPORT[algorithm] as Parameters<typeof crypto.subtle.generateKey>[0], true, [
    "sign",
    "verify",
  ])) as { privateKey: CryptoKey };
  const passkey: Passkey = {
    credentialId: toBase64Url(crypto.getRandomValues(new Uint8Array(16))),
    rpId,
    rpName: request.rp.name,
    userHandle: toBase64Url(request.user.id),
    userName: request.user.name,
    userDisplayName: request.user.displayName,
    algorithm,
    privateKey: toBase64Url(new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey))),
    counter: 0,
    discoverable: request.residentKey !== "discouraged",
    backupEligible: true,
    backupState: true,
    createdAt: now.toISOString(),
  };
  return { passkey, registration: await registrationFor(passkey, request) };
}

/**
 * The passkeys among `candidates` that may answer the page's sign-in: of the relying party the
 * page may claim (else the page's error), named by the site, or discoverable when it names none.
 */
export function passkeysFor(request: AssertionRequest, candidates: readonly Passkey[]): Passkey[] {
  const rpId = relyingPartyFor(request.origin, request.rpId);
  const allowed = new Set((request.allowCredentials ?? []).map((c) => toBase64Url(c.id)));
  return candidates.filter((p) => p.rpId === rpId && (allowed.size === 0 ? p.discoverable : allowed.has(p.credentialId)));
}

/**
 * The page's sign-in answered with `passkey` (one `passkeysFor` gave), and the counter the item
 * must now hold. Throws `NO_PASSKEY` when the passkey may not answer this page.
 */
export async function assertPasskey(request: AssertionRequest, passkey: Passkey): Promise<{ assertion: AssertionJSON; counter: number }> {
  if (!passkeysFor(request, [passkey]).length) throw new PasskeyError("NO_PASSKEY", `this passkey is not one ${request.origin} may use`);
  const counter = (passkey.counter + 1) >>> 0;
  const authData = concat(await sha256(utf8(passkey.rpId)), new Uint8Array([flagsOf(passkey)]), uint32(counter));
  const clientData = utf8(clientDataJSON("webauthn.get", request.challenge, request.origin));
  const { privateKey } = await keysOf(passkey);
  const signed = new Uint8Array(await crypto.subtle.sign(SIGN[passkey.algorithm], privateKey, concat(authData, await sha256(clientData))));
  return {
    counter,
    assertion: {
      id: passkey.credentialId,
      rawId: passkey.credentialId,
      type: "public-key",
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
      response: {
        clientDataJSON: toBase64Url(clientData),
        authenticatorData: toBase64Url(authData),
        signature: toBase64Url(passkey.algorithm === "ES256" ? derSignature(signed) : signed),
        ...(passkey.userHandle !== "" && { userHandle: passkey.userHandle }),
      },
    },
  };
}
