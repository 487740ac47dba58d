/**
 * A send's owner note: its title, kind and link secret, sealed to the sender's own public key, so
 * that the sender's list names each send and copies its link again, and the server reads neither.
 *   note = u16 length of the wrap || RSA-OAEP wrap of a random key || AES-GCM(key, JSON, aad = "vault-send-owner-note/v1\n" || sendId)
 * The associated data keeps a note from being moved to another of the sender's sends.
 */
import { concatBytes, fromBase64, fromUtf8, toBase64, utf8, type Bytes } from "../../protocol/encoding";
import { gcmDecrypt, gcmEncrypt, randomBytes, rsaOaepUnwrap, rsaOaepWrap, type CryptoKey } from "../../protocol/crypto/primitives";
import { ownerNoteAad, type OwnerNote } from "../../protocol/formats/sends";

export async function sealOwnerNote(publicKeyDer: Bytes, sendId: string, note: OwnerNote): Promise<string> {
  const key = randomBytes(32);
  const wrapped = await rsaOaepWrap(publicKeyDer, key);
  const sealed = await gcmEncrypt(key, utf8(JSON.stringify(note)), ownerNoteAad(sendId));
  const length = new Uint8Array([wrapped.length >> 8, wrapped.length & 255]);
  return toBase64(concatBytes(length, wrapped, sealed));
}

/** The note, or null when it does not open (sealed to keys this account had before a rotation, or not this send's). */
export async function openOwnerNote(privateKey: CryptoKey, sendId: string, text: string): Promise<OwnerNote | null> {
  try {
    const bytes = fromBase64(text);
    const n = (bytes[0]! << 8) | bytes[1]!;
    const key = await rsaOaepUnwrap(privateKey, bytes.slice(2, 2 + n));
    const note = JSON.parse(fromUtf8(await gcmDecrypt(key, bytes.slice(2 + n), ownerNoteAad(sendId)))) as OwnerNote;
    if (typeof note.title !== "string" || typeof note.secret !== "string" || (note.kind !== "text" && note.kind !== "file")) return null;
    return note;
  } catch {
    return null;
  }
}
