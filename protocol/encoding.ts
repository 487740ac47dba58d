/** Bytes and text, with what browsers and Node share (no Buffer): base64, UTF-8, hex. */

/** Bytes backed by a plain ArrayBuffer: what WebCrypto accepts everywhere. */
export type Bytes = Uint8Array<ArrayBuffer>;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export const utf8 = (text: string): Bytes => new Uint8Array(encoder.encode(text));
export const fromUtf8 = (bytes: Uint8Array): string => decoder.decode(bytes);

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  // In slices of 8 KiB: String.fromCharCode takes its arguments on the stack. `apply` reads a typed
  // array as it is; a spread iterates it, about 30 times slower (240 ms for a 1 MiB chunk in Node 24).
  for (let i = 0; i < bytes.length; i += 0x2000)
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x2000) as unknown as number[]);
  return btoa(binary);
}

/** Standard base64 with padding, strictly: what does not re-encode to the same text is refused. */
export function fromBase64(text: string): Bytes {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new TypeError("not base64");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  if (toBase64(bytes) !== text) throw new TypeError("not canonical base64");
  return bytes;
}

/** Base64url without padding (RFC 4648 §5): for values that travel in a URL. */
export const toBase64Url = (bytes: Uint8Array): string => toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export function fromBase64Url(text: string): Bytes {
  const std = text.replace(/-/g, "+").replace(/_/g, "/");
  return fromBase64(std + "=".repeat((4 - (std.length % 4)) % 4));
}

export const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

export function fromHex(hex: string): Bytes {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new TypeError("not hex");
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

export function concatBytes(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Compares without an early exit, for values derived from secrets. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
