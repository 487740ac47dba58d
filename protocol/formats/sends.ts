// Sends: a secret text or a file shared with anyone who holds a link, for a while or a few views.
// Design: docs/design/sends.md
//
// The link is `<web vault>/#/send/<sendId>/<secret>`: 32 random bytes (base64url) in the URL's
// fragment, which browsers never send to a server. Everything the send holds is sealed under a key
// derived from that secret and the send's id (and, for a send with a password, from the password):
//   contentKey = HKDF-SHA256(ikm = secret [|| passwordKey], salt = "", info = "vault-send-content/v1\n" || sendId)
// A password is stretched with Argon2id at parameters fixed here (the server chooses nothing), salted
// from the secret, so that the server, which never holds the secret, cannot even start guessing it:
//   salt = HKDF(secret, "", "vault-send-password-salt/v1\n" || sendId, 16)
//   pw   = Argon2id(NFKC(password), salt, 3 passes, 64 MiB, 4 lanes)
//   passwordProof = HKDF(pw, "", "vault-send-password-proof/v1", 32)  -- sent to the server, which keeps a slow hash of it
//   passwordKey   = HKDF(pw, "", "vault-send-password-key/v1", 32)    -- never sent
// Every open proves the link's secret, so that a send's id alone (in a log, say) cannot use up its
// views or its password's guesses:
//   accessProof = HKDF(secret, "", "vault-send-access/v1\n" || sendId, 32)  -- the server keeps its SHA-256
// A send is parts, each sealed with AES-256-GCM on its own:
//   part = iv (12) || ciphertext || tag (16)
//   aad  = "vault-send-part/v1\n" || sendId (36 ASCII) || "\n" || index (u32, big-endian) || final (1 byte)
// Part 0 is the header, a JSON object (SendHeader): what the send is, its title and, for a text,
// the text; a file follows in parts 1.. of SEND_PART_BYTES each (an empty file: one empty part).
// The sender's owner note (its title and secret again, for the sender's list) is sealed to the
// sender's own public key and signed by the sender's signing key, so that the link can be copied
// again later and the server can neither read nor make up one.
import { concatBytes, fromBase64Url, fromUtf8, toBase64, toBase64Url, utf8, type Bytes } from "../encoding";
import { deriveMasterKey, gcmDecrypt, gcmEncrypt, hkdfSha256 } from "../crypto/primitives";
import { ATTACHMENT_CHUNK_BYTES, chunkCountOf } from "./attachments";
import { DEFAULT_ARGON2ID } from "../crypto/kdf";

export const SEND_SECRET_BYTES = 32;
export const SEND_PART_CONTEXT = "vault-send-part/v1\n";
export const SEND_CONTENT_CONTEXT = "vault-send-content/v1\n";
export const SEND_PASSWORD_SALT_CONTEXT = "vault-send-password-salt/v1\n";
export const SEND_PASSWORD_PROOF_CONTEXT = "vault-send-password-proof/v1";
export const SEND_PASSWORD_KEY_CONTEXT = "vault-send-password-key/v1";
export const SEND_OWNER_NOTE_CONTEXT = "vault-send-owner-note/v1\n";
export const SEND_OWNER_NOTE_SIGNATURE_CONTEXT = "vault-send-owner-note-signature/v1\n";
export const SEND_ACCESS_CONTEXT = "vault-send-access/v1\n";
/** Argon2id as accounts use it by default; fixed: a link's recipient derives with nothing the server says. */
export const SEND_PASSWORD_KDF = DEFAULT_ARGON2ID;
/** A file part's plaintext: every part but the last holds exactly this many bytes (as attachment chunks do). */
export const SEND_PART_BYTES = ATTACHMENT_CHUNK_BYTES;
/** What AES-GCM adds to each part. */
export const SEND_PART_OVERHEAD = 12 + 16;
/** The largest header (part 0) sealed: a text of up to 1 MiB with its JSON around it. */
export const MAX_SEND_HEADER_BYTES = 1024 * 1024 + 4096;
/** The largest sealed part of either kind. */
export const MAX_SEND_PART_SEALED = Math.max(SEND_PART_BYTES, MAX_SEND_HEADER_BYTES) + SEND_PART_OVERHEAD;
/** The most parts a send may have (the header and 4 GiB of file), far beyond any server's size limit. */
export const MAX_SEND_PARTS = 1 + 4096;

/** What a send's header says: the sender's words, which the link's secret vouches for (the server cannot forge them). */
export interface SendHeader {
  v: 1;
  kind: "text" | "file";
  /** What the sender called it. */
  title: string;
  /** Who the sender says they are (their email), when they chose to say. */
  from?: string;
  /** A text send's text. */
  text?: string;
  /** A file send's file: its name, media type and plaintext size. */
  file?: { name: string; type: string; size: number };
}

/** How many parts a send of this header is: one for a text, the header and the file's chunks for a file. */
export const sendPartCount = (h: Pick<SendHeader, "kind" | "file">): number => (h.kind === "file" ? 1 + chunkCountOf(h.file!.size) : 1);

/** A link's parts. */
export interface SendLink {
  /** Where the web vault is, as the link names it (its origin and path, without the fragment). */
  base: string;
  sendId: string;
  secret: Bytes;
}

const LINK = /^(?<base>[^#]*)#\/send\/(?<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(?<secret>[A-Za-z0-9_-]{43})$/;

/** The link of a send: the web vault's address, then the id and the secret in the fragment. */
export function sendLinkOf(base: string, sendId: string, secret: Bytes): string {
  if (secret.length !== SEND_SECRET_BYTES) throw new RangeError("a send's secret is 32 bytes");
  return `${base.replace(/#.*$/, "").replace(/\/+$/, "")}/#/send/${sendId}/${toBase64Url(secret)}`;
}

/** A link's id and secret, or null when the text is not a send's link. */
export function parseSendLink(text: string): SendLink | null {
  const m = LINK.exec(text.trim());
  if (!m?.groups) return null;
  let secret: Bytes;
  try {
    // Throws on a non-canonical encoding (bits set past the 32 bytes): not a link, as any other.
    secret = fromBase64Url(m.groups.secret!);
  } catch {
    return null;
  }
  if (secret.length !== SEND_SECRET_BYTES || toBase64Url(secret) !== m.groups.secret) return null;
  return { base: m.groups.base!.replace(/\/+$/, ""), sendId: m.groups.id!, secret };
}

const none = new Uint8Array(0);

/**
 * The key of a send's parts, the proof of the link every open carries, and the proof of its
 * password the server checks (with a password only).
 */
export async function deriveSendKeys(
  secret: Bytes,
  sendId: string,
  password?: string,
): Promise<{ contentKey: Bytes; accessProof: Bytes; passwordProof?: Bytes }> {
  const info = utf8(`${SEND_CONTENT_CONTEXT}${sendId}`);
  const accessProof = await hkdfSha256(secret, none, utf8(`${SEND_ACCESS_CONTEXT}${sendId}`), 32);
  if (password === undefined) return { contentKey: await hkdfSha256(secret, none, info, 32), accessProof };
  const salt = await hkdfSha256(secret, none, utf8(`${SEND_PASSWORD_SALT_CONTEXT}${sendId}`), 16);
  const pw = await deriveMasterKey(password, { ...SEND_PASSWORD_KDF, salt: toBase64(salt) });
  const [passwordProof, passwordKey] = await Promise.all([
    hkdfSha256(pw, none, utf8(SEND_PASSWORD_PROOF_CONTEXT), 32),
    hkdfSha256(pw, none, utf8(SEND_PASSWORD_KEY_CONTEXT), 32),
  ]);
  return { contentKey: await hkdfSha256(concatBytes(secret, passwordKey), none, info, 32), accessProof, passwordProof };
}

/** The associated data of part `index` of send `sendId`. */
export function sendPartAad(sendId: string, index: number, final: boolean): Bytes {
  const tail = new Uint8Array(5);
  new DataView(tail.buffer).setUint32(0, index, false);
  tail[4] = final ? 1 : 0;
  return concatBytes(utf8(`${SEND_PART_CONTEXT}${sendId}\n`), tail);
}

export const sealSendPart = (key: Bytes, sendId: string, index: number, final: boolean, plain: Bytes): Promise<Bytes> =>
  gcmEncrypt(key, plain, sendPartAad(sendId, index, final));

/** Opens one part; throws when the key, the send, the place, the final flag or a single bit is wrong. */
export const openSendPart = (key: Bytes, sendId: string, index: number, final: boolean, sealed: Bytes): Promise<Bytes> =>
  gcmDecrypt(key, sealed, sendPartAad(sendId, index, final));

/** The header's bytes (part 0's plaintext). */
export const headerBytes = (h: SendHeader): Bytes => utf8(JSON.stringify(h));

/** A header as opened, checked field by field; null when it is not one. */
export function parseSendHeader(bytes: Uint8Array): SendHeader | null {
  let h: Record<string, unknown>;
  try {
    h = JSON.parse(fromUtf8(bytes)) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof h !== "object" || h === null || h.v !== 1 || typeof h.title !== "string") return null;
  if (h.from !== undefined && typeof h.from !== "string") return null;
  if (h.kind === "text") return typeof h.text === "string" ? { v: 1, kind: "text", title: h.title, text: h.text, ...fromOf(h) } : null;
  const f = h.file as Record<string, unknown> | undefined;
  if (h.kind !== "file" || typeof f !== "object" || f === null) return null;
  if (typeof f.name !== "string" || typeof f.type !== "string" || !Number.isSafeInteger(f.size) || (f.size as number) < 0) return null;
  return { v: 1, kind: "file", title: h.title, file: { name: f.name, type: f.type, size: f.size as number }, ...fromOf(h) };
}

const fromOf = (h: Record<string, unknown>) => (typeof h.from === "string" ? { from: h.from } : {});

/** The associated data of a send's owner note: it opens for this send only. */
export const ownerNoteAad = (sendId: string): Bytes => utf8(`${SEND_OWNER_NOTE_CONTEXT}${sendId}`);

/** What an owner note holds: the title and the secret, for the sender's list and a link copied again. */
export interface OwnerNote {
  title: string;
  kind: SendHeader["kind"];
  secret: string;
}

export const secretText = (secret: Bytes): string => toBase64Url(secret);
