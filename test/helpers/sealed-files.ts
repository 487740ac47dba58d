/** Attachments as clients seal them (protocol/formats/attachments.ts), and a vault to put them in, made straight in a store. */
import { createHash, randomBytes } from "node:crypto";
import { newId, type AttachmentId, type ItemId, type OrgId, type UserId, type VaultId } from "../../lib/domain/ids";
import type { Store } from "../../lib/store/port";
import { ATTACHMENT_CHUNK_BYTES, chunkCountOf, openChunk, sealChunk } from "../../protocol/formats/attachments";
import type { Bytes } from "../../protocol/encoding";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared } from "./crypto";

/** A file as a client seals it: its key, its plaintext, and its sealed chunks. */
export interface SealedFile {
  attachmentId: AttachmentId;
  size: number;
  key: Bytes;
  plain: Bytes;
  chunks: Bytes[];
}

export async function sealFile(size: number, attachmentId = newId<AttachmentId>()): Promise<SealedFile> {
  const key = new Uint8Array(randomBytes(32));
  const plain = new Uint8Array(randomBytes(size));
  const count = chunkCountOf(size);
  const chunks: Bytes[] = [];
  for (let i = 0; i < count; i++) {
    const part = plain.subarray(i * ATTACHMENT_CHUNK_BYTES, Math.min(size, (i + 1) * ATTACHMENT_CHUNK_BYTES));
    chunks.push(await sealChunk(key, attachmentId, i, i === count - 1, part));
  }
  return { attachmentId, size, key, plain, chunks };
}

/** Opens sealed chunks read back with the file's key, and joins them. */
export async function openFile(f: SealedFile, sealed: readonly Uint8Array[]): Promise<Uint8Array> {
  const parts = await Promise.all(sealed.map((s, i) => openChunk(f.key, f.attachmentId, i, i === sealed.length - 1, new Uint8Array(s))));
  return Buffer.concat(parts);
}

/** Bytes compared by their SHA-256: a failure says so at once, without a diff of a megabyte. */
export const digest = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** The owner of a new organization (real keys), with a shared vault of theirs holding one item. */
export async function ownerWithItem(store: Store): Promise<{ userId: UserId; orgId: OrgId; vaultId: VaultId; itemId: ItemId }> {
  const now = new Date().toISOString();
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  const user = { ...bundle, userId: newId<UserId>(), email: `${newId()}@example.test`, authHash: "scrypt$stored", createdAt: now };
  const { userId, orgId } = await store.accounts.registerOwnerOfNewOrg({
    user,
    org: { orgId: newId<OrgId>(), name: "Files", createdAt: now },
    onlyIfFirstUser: false,
  });
  const wrapped = wrapShared(randomBytes(32), bundle.publicKey);
  const wrap = { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys.edPrivate)) };
  const { vaultId } = await store.vaults.createVault({
    vault: { vaultId: newId(), orgId, name: "v", type: "shared", ownerId: userId, ...wrap },
    now,
  });
  const { itemId } = await store.items.createItem({
    vaultId,
    actorId: userId,
    itemId: newId(),
    write: { encryptedData: "AAAA", encryptedName: "AAAA" },
    limits: { maxBytes: 1 << 30, maxItems: 1_000_000 },
    now,
  });
  return { userId, orgId, vaultId, itemId };
}
