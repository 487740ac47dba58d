/**
 * A send's owner note: its title, kind and link secret, sealed to the sender's own public key and
 * signed by the sender's own signing key, so that the sender's list names each send and copies its
 * link again, and the server reads none of it and can make none of it up:
 *   note = signature (64) || u16 length of the wrap || RSA-OAEP wrap of a random key || AES-GCM(key, JSON, aad = "vault-send-owner-note/v1\n" || sendId)
 *   signature = Ed25519(sender, "vault-send-owner-note-signature/v1\n" || sendId || "\n" || the rest of the note)
 * Anyone holding the public key could seal a note; only the sender can sign one. The associated
 * data and the signed id keep a note from being moved to another of the sender's sends.
 */
import { concatBytes, fromBase64, fromUtf8, toBase64, utf8, type Bytes } from "../../protocol/encoding";
import {
  ed25519Sign,
  ed25519Verify,
  gcmDecrypt,
  gcmEncrypt,
  randomBytes,
  rsaOaepUnwrap,
  rsaOaepWrap,
  type CryptoKey,
} from "../../protocol/crypto/primitives";
import { ownerNoteAad, SEND_OWNER_NOTE_SIGNATURE_CONTEXT, type OwnerNote } from "../../protocol/formats/sends";

/** The keys of the account that makes and reads its notes. */
export interface NoteKeys {
  publicKeyDer: Bytes;
  rsaPrivateKey: CryptoKey;
  signingPrivateKey: CryptoKey;
  signingPublicKeyRaw: Bytes;
}

const SIGNATURE_BYTES = 64;
const signed = (sendId: string, body: Bytes): Bytes => concatBytes(utf8(`${SEND_OWNER_NOTE_SIGNATURE_CONTEXT}${sendId}\n`), body);

export async function sealOwnerNote(keys: NoteKeys, sendId: string, note: OwnerNote): Promise<string> {
  const key = randomBytes(32);
  const wrapped = await rsaOaepWrap(keys.publicKeyDer, key);
  const sealed = await gcmEncrypt(key, utf8(JSON.stringify(note)), ownerNoteAad(sendId));
  const body = concatBytes(new Uint8Array([wrapped.length >> 8, wrapped.length & 255]), wrapped, sealed);
  return toBase64(concatBytes(await ed25519Sign(keys.signingPrivateKey, signed(sendId, body)), body));
}

/**
 * The note, or null when it is not this account's for this send: not signed by its signing key
 * (made up by someone else, or signed before a key rotation), or sealed for another send.
 */
export async function openOwnerNote(keys: NoteKeys, sendId: string, text: string): Promise<OwnerNote | null> {
  try {
    const bytes = fromBase64(text);
    const body = bytes.slice(SIGNATURE_BYTES);
    if (!(await ed25519Verify(keys.signingPublicKeyRaw, signed(sendId, body), bytes.slice(0, SIGNATURE_BYTES)))) return null;
    const n = (body[0]! << 8) | body[1]!;
    const key = await rsaOaepUnwrap(keys.rsaPrivateKey, body.slice(2, 2 + n));
    const note = JSON.parse(fromUtf8(await gcmDecrypt(key, body.slice(2 + n), ownerNoteAad(sendId)))) as OwnerNote;
    if (typeof note.title !== "string" || typeof note.secret !== "string" || (note.kind !== "text" && note.kind !== "file")) return null;
    return note;
  } catch {
    return null;
  }
}
