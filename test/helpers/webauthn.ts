/**
 * A software security key for HTTP tests: ES256 (P-256) credentials made with node:crypto, answering
 * registration and sign-in challenges as an authenticator does (CBOR attestation "none", the
 * authenticator data with its signature counter, clientDataJSON with the origin). Real signatures:
 * the server's @simplewebauthn/server checks them like any key's. Chromium's virtual authenticator
 * covers the browser (test/clients/web.test.ts).
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { encodeCBOR } from "@levischuck/tiny-cbor";

const b64url = (b: Buffer | Uint8Array) => Buffer.from(b).toString("base64url");
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest();

export class SoftKey {
  readonly credentialId = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  /** The signature counter the next answer carries (a test sets it back to play a cloned key). */
  counter = 0;

  constructor(
    readonly origin = "http://localhost",
    readonly rpId = "localhost",
  ) {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = pair.privateKey;
    this.publicJwk = pair.publicKey.export({ format: "jwk" }) as { x: string; y: string };
  }

  private clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  private authData(flags: number, attested?: Buffer): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(this.rpId), Buffer.from([flags]), counter, ...(attested ? [attested] : [])]);
  }

  /** The answer to a registration challenge (the options the server sent). */
  register(options: { challenge: string }, origin?: string) {
    const cose = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(this.publicJwk.x, "base64url")],
      [-3, Buffer.from(this.publicJwk.y, "base64url")],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, Buffer.from(encodeCBOR(cose as never))]);
    // Flags: user present (0x01), attested credential data (0x40).
    const authData = this.authData(0x41, attested);
    const attestationObject = encodeCBOR(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]) as never,
    );
    return {
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64url(this.clientData("webauthn.create", options.challenge, origin)),
        attestationObject: b64url(attestationObject),
        transports: ["usb"],
      },
      clientExtensionResults: {},
    };
  }

  /** The answer to a sign-in challenge; each answer moves the counter on by one first. */
  answer(challenge: string, opts: { origin?: string; keepCounter?: boolean } = {}) {
    if (!opts.keepCounter) this.counter += 1;
    const authData = this.authData(0x01);
    const clientDataJSON = this.clientData("webauthn.get", challenge, opts.origin);
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), { key: this.privateKey, dsaEncoding: "der" });
    return {
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
      },
      clientExtensionResults: {},
    };
  }
}
