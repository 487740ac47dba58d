/** TOTP codes computed here (RFC 6238 / 4226 with node:crypto), to check the SDK's and the clients' against. */
import { createHmac } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function toBase32(bytes: Buffer): string {
  let bits = "";
  for (const b of bytes) bits += b.toString(2).padStart(8, "0");
  return (bits.match(/.{1,5}/g) ?? []).map((c) => ALPHABET[parseInt(c.padEnd(5, "0"), 2)]).join("");
}

export function fromBase32(text: string): Buffer {
  const bits = [...text.replace(/[\s=]/g, "").toUpperCase()].map((c) => ALPHABET.indexOf(c).toString(2).padStart(5, "0")).join("");
  return Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => parseInt(b, 2)));
}

/** The code for `secret` at `atMs`: HMAC over the time step, dynamic truncation. */
export function referenceTotp(secret: Buffer, atMs: number, digits = 6, period = 30, algorithm = "sha1"): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / period)));
  const mac = createHmac(algorithm, secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(value).padStart(digits, "0");
}
