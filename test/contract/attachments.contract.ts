/**
 * Attachments (lib/store/port/attachments.ts), run inside the store contract against every adapter,
 * with chunks sealed as clients seal them (protocol/formats/attachments.ts): an upload's round
 * trip, every refusal by its named constructor, who sees what, the organization's quota held when
 * begins race in two vaults, chunks and finishes racing, and attachments dying with their item,
 * their vault and the sweeper's purges. Where the store keeps chunks as files (the embedded store:
 * `attachmentChunkDirs`), their folders are checked too.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { newId, type AttachmentId, type InviteId, type ItemId, type OrgId, type UserId, type VaultId } from "../../lib/domain/ids";
import type { AppError } from "../../lib/errors";
import type { DomainEvent } from "../../lib/domain/audit/events";
import * as refusals from "../../lib/domain/attachments/refusals";
import type { AttachmentLimits } from "../../lib/domain/attachments/decisions";
import { vaultNotFound } from "../../lib/domain/items/refusals";
import { ATTACHMENT_CHUNK_BYTES, openChunk, sealedSizeOf } from "../../protocol/formats/attachments";
import type { Store } from "../../lib/store/port";
import { digest, sealFile, type SealedFile } from "../helpers/sealed-files";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared, type UserKeys } from "../helpers/crypto";

/** The chunk folder of each store that keeps chunks as files (set by the test that opens it). */
export const attachmentChunkDirs = new WeakMap<Store, string>();

const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
const ROOMY = { maxBytes: 1 << 30, maxItems: 1_000_000 };
const LIMITS: AttachmentLimits = { maxFileBytes: 8 * ATTACHMENT_CHUNK_BYTES, perItem: 20, orgQuotaBytes: 1 << 30 };

interface Person {
  userId: UserId;
  orgId: OrgId;
  keys: UserKeys;
  publicKey: string;
}

/** The refusal `p` must end in: the named constructor's code, message and field. */
async function refused(p: Promise<unknown>, refusal: AppError): Promise<void> {
  await expect(p).rejects.toMatchObject({ type: refusal.type, message: refusal.message, data: refusal.data });
}

export function describeAttachments(getStore: () => Store): void {
  let store: Store;
  beforeAll(() => {
    store = getStore();
  });

  async function person(
    register: (bundle: ReturnType<typeof registrationBundle>) => Promise<{ userId: UserId; orgId: OrgId }>,
  ): Promise<Person> {
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    const rec = await register(bundle);
    return { ...rec, keys, publicKey: bundle.publicKey };
  }

  /** The owner of a new organization, and `members` more people in it. */
  async function org(members = 0): Promise<Person[]> {
    const owner = await person(async (bundle) => {
      const user = { ...bundle, userId: newId<UserId>(), email: `${newId()}@example.test`, authHash: "scrypt$stored", createdAt: at() };
      return store.accounts.registerOwnerOfNewOrg({
        user,
        org: { orgId: newId(), name: "Files", createdAt: at() },
        onlyIfFirstUser: false,
      });
    });
    const people: Person[] = [owner];
    for (let i = 0; i < members; i++)
      people.push(
        await person(async (bundle) => {
          const email = `${newId()}@example.test`;
          const invite = { inviteId: newId<InviteId>(), orgId: owner.orgId, email, role: "member" as const, inviterId: owner.userId };
          await store.invites.createInvite({
            invite: { ...invite, status: "pending", expiresAt: at(3_600_000), createdAt: at() },
            tokenHash: newId(),
          });
          const user = { ...bundle, userId: newId<UserId>(), email, authHash: "scrypt$stored", createdAt: at() };
          return store.accounts.registerWithInvite({ user, inviteId: invite.inviteId, now: at() });
        }),
      );
    return people;
  }

  const wrapFor = (vaultKey: Buffer, holder: Person, sender: Person) => {
    const wrapped = wrapShared(vaultKey, holder.publicKey);
    return { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, sender.keys.edPrivate)) };
  };

  /** A shared vault of `people[0]`'s, the others members of it, with `items` items. */
  async function vault(people: Person[], items = 1): Promise<{ vaultId: VaultId; itemIds: ItemId[] }> {
    const [owner] = people as [Person];
    const vaultKey = randomBytes(32);
    const { vaultId } = await store.vaults.createVault({
      vault: { vaultId: newId(), orgId: owner.orgId, name: "v", type: "shared", ownerId: owner.userId, ...wrapFor(vaultKey, owner, owner) },
      now: at(),
    });
    for (const p of people.slice(1))
      await store.vaults.addMember({
        vaultId,
        actorId: owner.userId,
        member: { userId: p.userId, role: "member", ...wrapFor(vaultKey, p, owner) },
        now: at(),
      });
    const itemIds: ItemId[] = [];
    for (let i = 0; i < items; i++) {
      const { itemId } = await store.items.createItem({
        vaultId,
        actorId: owner.userId,
        itemId: newId(),
        write: { encryptedData: "AAAA", encryptedName: "AAAA" },
        limits: ROOMY,
        now: at(),
      });
      itemIds.push(itemId);
    }
    return { vaultId, itemIds };
  }

  const begin = (
    p: Person,
    vaultId: VaultId,
    itemId: ItemId,
    f: Pick<SealedFile, "attachmentId" | "size">,
    opts: { limits?: AttachmentLimits; now?: string } = {},
  ) =>
    store.attachments.beginUpload({
      vaultId,
      actorId: p.userId,
      itemId,
      attachmentId: f.attachmentId,
      size: f.size,
      limits: opts.limits ?? LIMITS,
      now: opts.now ?? at(),
    });

  const put = (p: Person, vaultId: VaultId, f: SealedFile, index: number, data = f.chunks[index]!) =>
    store.attachments.putChunk({ vaultId, actorId: p.userId, attachmentId: f.attachmentId, index, data });

  const finish = (p: Person, vaultId: VaultId, f: Pick<SealedFile, "attachmentId">, events?: DomainEvent[]) =>
    store.attachments.finishUpload({ vaultId, actorId: p.userId, attachmentId: f.attachmentId, now: at(), ...(events && { events }) });

  /** Begins, sends every chunk and finishes. */
  async function upload(p: Person, vaultId: VaultId, itemId: ItemId, f: SealedFile, opts: { now?: string } = {}) {
    await begin(p, vaultId, itemId, f, opts);
    for (let i = 0; i < f.chunks.length; i++) await put(p, vaultId, f, i);
    return finish(p, vaultId, f);
  }

  /** Reads the whole file back and opens it with its key. */
  async function download(p: Person, vaultId: VaultId, f: SealedFile): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for (let i = 0; i < f.chunks.length; i++) {
      const sealed = await store.attachments.readChunk({ vaultId, actorId: p.userId, attachmentId: f.attachmentId, index: i });
      expect([i, digest(sealed)]).toEqual([i, digest(f.chunks[i]!)]);
      parts.push(await openChunk(f.key, f.attachmentId, i, i === f.chunks.length - 1, new Uint8Array(sealed)));
    }
    return Buffer.concat(parts);
  }

  const event = (type: DomainEvent["type"], p: Person, vaultId: VaultId): DomainEvent => ({
    eventId: newId(),
    type,
    at: at(),
    actorId: p.userId,
    orgId: p.orgId,
    vaultId,
  });

  /** On a store that keeps chunks as files: the attachment's folder's entries (undefined: no folder). Elsewhere: not asked. */
  function folderOf(id: AttachmentId): { dir?: string; entries?: string[] } {
    const dir = attachmentChunkDirs.get(store);
    if (!dir) return {};
    const folder = path.join(dir, id);
    return { dir, ...(fs.existsSync(folder) && { entries: fs.readdirSync(folder).sort() }) };
  }
  const expectGone = (id: AttachmentId) => {
    const { dir, entries } = folderOf(id);
    if (dir) expect([id, entries]).toEqual([id, undefined]);
  };
  const expectFiles = (id: AttachmentId, count: number) => {
    const { dir, entries } = folderOf(id);
    if (dir) expect([id, entries]).toEqual([id, Array.from({ length: count }, (_, i) => String(i)).sort()]);
  };

  test("attachments: a file of several chunks, sent out of order, read back byte for byte once finished; an empty file is one chunk of 28 bytes", async () => {
    const [ada] = await org();
    const { vaultId, itemIds } = await vault([ada!]);
    const f = await sealFile(2 * ATTACHMENT_CHUNK_BYTES + 1000);
    const begun = await begin(ada!, vaultId, itemIds[0]!, f);
    expect(begun).toMatchObject({
      attachmentId: f.attachmentId,
      vaultId,
      itemId: itemIds[0],
      size: f.size,
      chunkCount: 3,
      complete: false,
      uploadedBy: ada!.userId,
      completedAt: null,
      received: [],
    });
    for (const i of [2, 0, 1]) await put(ada!, vaultId, f, i);
    const status = await store.attachments.getAttachment({ vaultId, actorId: ada!.userId, attachmentId: f.attachmentId });
    expect(status).toMatchObject({ complete: false, received: [0, 1, 2] });
    const done = await finish(ada!, vaultId, f);
    expect(done).toMatchObject({ attachmentId: f.attachmentId, complete: true, completedAt: expect.any(String) });
    expect(digest(await download(ada!, vaultId, f))).toEqual(digest(f.plain));
    expectFiles(f.attachmentId, 3);

    const empty = await sealFile(0);
    expect(empty.chunks.map((c) => c.length)).toEqual([28]);
    await upload(ada!, vaultId, itemIds[0]!, empty);
    expect((await download(ada!, vaultId, empty)).length).toBe(0);
    expect(
      (await store.attachments.listAttachments({ vaultId, actorId: ada!.userId, itemId: itemIds[0]! })).map((a) => a.attachmentId),
    ).toEqual([f.attachmentId, empty.attachmentId]);
    expect(await store.attachments.usage({ orgId: ada!.orgId })).toEqual({ bytes: sealedSizeOf(f.size) + 28, files: 2 });
  });

  test("attachments: a chunk sent again replaces the first; a finish writes its events only the first time", async () => {
    const [ada] = await org();
    const { vaultId, itemIds } = await vault([ada!]);
    const f = await sealFile(ATTACHMENT_CHUNK_BYTES + 10);
    const again = await sealFile(f.size, f.attachmentId);
    await begin(ada!, vaultId, itemIds[0]!, f);
    await put(ada!, vaultId, f, 0);
    await put(ada!, vaultId, f, 1);
    await put(ada!, vaultId, f, 0, again.chunks[0]);
    await put(ada!, vaultId, f, 1, again.chunks[1]);
    const [first, second] = [event("item.attachment_added", ada!, vaultId), event("item.attachment_added", ada!, vaultId)];
    await finish(ada!, vaultId, f, [first!]);
    expect(await finish(ada!, vaultId, f, [second!])).toMatchObject({ complete: true });
    const pending = (await store.outbox.pending(100_000)).map((e) => e.eventId);
    expect([pending.includes(first!.eventId), pending.includes(second!.eventId)]).toEqual([true, false]);
    expect(digest(await download(ada!, vaultId, again))).toEqual(digest(again.plain));
    expectFiles(f.attachmentId, 2);
  });

  test("attachments: every refusal, by its named constructor", async () => {
    const [ada, bob] = await org(1);
    const { vaultId, itemIds } = await vault([ada!, bob!], 2);
    const [itemId, trashedId] = itemIds as [ItemId, ItemId];
    await store.items.deleteItem({ vaultId, actorId: ada!.userId, itemId: trashedId, now: at() });
    const f = await sealFile(2 * ATTACHMENT_CHUNK_BYTES + 5);
    await refused(begin(ada!, vaultId, newId<ItemId>(), f), refusals.attachmentItemNotFound());
    await refused(begin(ada!, vaultId, trashedId, f), refusals.attachmentItemNotFound());
    await refused(
      begin(ada!, vaultId, itemId, { ...f, size: LIMITS.maxFileBytes + 1 }),
      refusals.attachmentTooLarge(LIMITS.maxFileBytes + 1, LIMITS.maxFileBytes),
    );
    await begin(ada!, vaultId, itemId, f);
    await refused(begin(bob!, vaultId, itemId, f), refusals.attachmentIdTaken());
    const other = await vault([ada!]);
    await refused(begin(ada!, other.vaultId, other.itemIds[0]!, f), refusals.attachmentIdTaken());
    await refused(
      begin(ada!, vaultId, itemId, { attachmentId: newId(), size: 1 }, { limits: { ...LIMITS, perItem: 1 } }),
      refusals.tooManyAttachments(1),
    );
    const used = sealedSizeOf(f.size);
    const quota = { ...LIMITS, orgQuotaBytes: used + 100 };
    await refused(
      begin(ada!, other.vaultId, other.itemIds[0]!, { attachmentId: newId(), size: 100 }, { limits: quota }),
      refusals.attachmentQuotaFull(used, 100 + 28, used + 100),
    );

    await refused(put(bob!, vaultId, f, 0), refusals.notYourUpload());
    await refused(put(ada!, vaultId, f, 3, f.chunks[0]), refusals.chunkIndexOutOfRange(3, 3));
    await refused(put(ada!, vaultId, f, -1, f.chunks[0]), refusals.chunkIndexOutOfRange(-1, 3));
    await refused(put(ada!, vaultId, f, 2, f.chunks[0]), refusals.chunkWrongSize(2, 5 + 28, ATTACHMENT_CHUNK_BYTES + 28));
    await refused(put(ada!, vaultId, { ...f, attachmentId: newId() }, 0), refusals.attachmentNotFound());
    await put(ada!, vaultId, f, 0);
    await put(ada!, vaultId, f, 2);
    await refused(finish(ada!, vaultId, f), refusals.uploadIncomplete(1, 3));
    await refused(finish(bob!, vaultId, f), refusals.notYourUpload());
    await refused(finish(ada!, vaultId, { attachmentId: newId() }), refusals.attachmentNotFound());
    const read = (p: Person, index = 0) => store.attachments.readChunk({ vaultId, actorId: p.userId, attachmentId: f.attachmentId, index });
    await refused(read(ada!), refusals.attachmentNotFound());
    await put(ada!, vaultId, f, 1);
    await finish(ada!, vaultId, f);
    await refused(put(ada!, vaultId, f, 1), refusals.uploadFinished());
    await refused(put(bob!, vaultId, f, 1), refusals.uploadFinished());
    await refused(read(bob!, 3), refusals.chunkIndexOutOfRange(3, 3));
    // The attachment is in its vault only.
    await refused(
      store.attachments.getAttachment({ vaultId: other.vaultId, actorId: ada!.userId, attachmentId: f.attachmentId }),
      refusals.attachmentNotFound(),
    );
    expectFiles(f.attachmentId, 3);
  });

  test("attachments: a non-member, or a vault that is not there, is told the vault is not found, by every call", async () => {
    const [ada, bob] = await org(1);
    const { vaultId, itemIds } = await vault([ada!]);
    const f = await sealFile(10);
    await upload(ada!, vaultId, itemIds[0]!, f);
    const calls = (v: VaultId, p: Person) => [
      begin(p, v, itemIds[0]!, { attachmentId: newId(), size: 1 }),
      put(p, v, f, 0),
      finish(p, v, f),
      store.attachments.getAttachment({ vaultId: v, actorId: p.userId, attachmentId: f.attachmentId }),
      store.attachments.readChunk({ vaultId: v, actorId: p.userId, attachmentId: f.attachmentId, index: 0 }),
      store.attachments.listAttachments({ vaultId: v, actorId: p.userId, itemId: itemIds[0]! }),
      store.attachments.deleteAttachment({ vaultId: v, actorId: p.userId, attachmentId: f.attachmentId }),
    ];
    for (const [v, p] of [
      [vaultId, bob!],
      [newId<VaultId>(), ada!],
    ] as const) {
      const outcomes = await Promise.allSettled(calls(v, p));
      const notFound = vaultNotFound();
      expect(outcomes.map((o) => (o.status === "rejected" ? [o.reason.type, o.reason.message] : o.status))).toEqual(
        outcomes.map(() => [notFound.type, notFound.message]),
      );
    }
    expect(digest(await download(ada!, vaultId, f))).toEqual(digest(f.plain));
  });

  test("attachments: another member sees an upload only once it is finished, then reads it and may delete it", async () => {
    const [ada, bob] = await org(1);
    const { vaultId, itemIds } = await vault([ada!, bob!]);
    const f = await sealFile(ATTACHMENT_CHUNK_BYTES + 1);
    await begin(ada!, vaultId, itemIds[0]!, f);
    await put(ada!, vaultId, f, 0);
    const list = (p: Person) => store.attachments.listAttachments({ vaultId, actorId: p.userId, itemId: itemIds[0]! });
    const get = (p: Person) => store.attachments.getAttachment({ vaultId, actorId: p.userId, attachmentId: f.attachmentId });
    expect((await list(ada!)).map((a) => a.attachmentId)).toEqual([f.attachmentId]);
    expect(await list(bob!)).toEqual([]);
    await refused(get(bob!), refusals.attachmentNotFound());
    await refused(
      store.attachments.deleteAttachment({ vaultId, actorId: bob!.userId, attachmentId: f.attachmentId }),
      refusals.attachmentNotFound(),
    );
    await put(ada!, vaultId, f, 1);
    await finish(ada!, vaultId, f);
    expect(await get(bob!)).toMatchObject({ complete: true, received: [0, 1] });
    expect((await list(bob!)).map((a) => a.attachmentId)).toEqual([f.attachmentId]);
    expect(digest(await download(bob!, vaultId, f))).toEqual(digest(f.plain));
    const removed = event("item.attachment_removed", bob!, vaultId);
    await store.attachments.deleteAttachment({ vaultId, actorId: bob!.userId, attachmentId: f.attachmentId, events: [removed] });
    expect((await store.outbox.pending(100_000)).map((e) => e.eventId)).toContain(removed.eventId);
    await refused(get(ada!), refusals.attachmentNotFound());
    expect(await store.attachments.usage({ orgId: ada!.orgId })).toEqual({ bytes: 0, files: 0 });
    expectGone(f.attachmentId);
  });

  test("attachments: ten begins at once in two vaults of one organization: exactly those that fit its quota land, and its usage never passes it", async () => {
    const [ada] = await org();
    const [one, two] = [await vault([ada!]), await vault([ada!])];
    const size = 100_000;
    const limits = { ...LIMITS, orgQuotaBytes: 4 * sealedSizeOf(size) + 1000 };
    // Connections open beforehand (on a store with a pool), so that the begins start together.
    await Promise.all(Array.from({ length: 10 }, () => store.attachments.usage({ orgId: ada!.orgId })));
    let settled = false;
    const seen: number[] = [];
    const watcher = (async () => {
      while (!settled) seen.push((await store.attachments.usage({ orgId: ada!.orgId })).bytes);
    })();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => {
        const v = i % 2 === 0 ? one : two;
        return begin(ada!, v.vaultId, v.itemIds[0]!, { attachmentId: newId(), size }, { limits });
      }),
    );
    settled = true;
    await watcher;
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(4);
    // Each refused one found exactly the four that fit: none saw fewer, none more.
    const full = refusals.attachmentQuotaFull(4 * sealedSizeOf(size), sealedSizeOf(size), limits.orgQuotaBytes);
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ type: full.type, message: full.message });
    expect(await store.attachments.usage({ orgId: ada!.orgId })).toEqual({ bytes: 4 * sealedSizeOf(size), files: 4 });
    expect(seen.filter((bytes) => bytes > limits.orgQuotaBytes)).toEqual([]);
  });

  test("attachments: one chunk sent six times at once, and finishes racing the last chunk, leave a consistent upload", async () => {
    const [ada] = await org();
    const { vaultId, itemIds } = await vault([ada!]);
    const f = await sealFile(ATTACHMENT_CHUNK_BYTES + 3);
    const versions = [f, ...(await Promise.all(Array.from({ length: 5 }, () => sealFile(f.size, f.attachmentId))))];
    await begin(ada!, vaultId, itemIds[0]!, f);
    const puts = await Promise.allSettled(versions.map((v) => put(ada!, vaultId, f, 0, v.chunks[0])));
    expect(puts.map((o) => o.status)).toEqual(versions.map(() => "fulfilled"));
    await put(ada!, vaultId, f, 1);
    await finish(ada!, vaultId, f);
    const stored = Buffer.from(
      await store.attachments.readChunk({ vaultId, actorId: ada!.userId, attachmentId: f.attachmentId, index: 0 }),
    );
    const winner = versions.find((v) => Buffer.from(v.chunks[0]!).equals(stored));
    expect(winner).toBeDefined();
    expectFiles(f.attachmentId, 2);

    for (let round = 0; round < 5; round++) {
      const g = await sealFile(ATTACHMENT_CHUNK_BYTES + 1);
      await begin(ada!, vaultId, itemIds[0]!, g);
      await put(ada!, vaultId, g, 0);
      const [sent, finished] = await Promise.allSettled([put(ada!, vaultId, g, 1), finish(ada!, vaultId, g)]);
      expect(sent.status).toBe("fulfilled");
      if (finished.status === "rejected") {
        expect(finished.reason).toMatchObject({ message: refusals.uploadIncomplete(1, 2).message });
        expect(await store.attachments.getAttachment({ vaultId, actorId: ada!.userId, attachmentId: g.attachmentId })).toMatchObject({
          complete: false,
          received: [0, 1],
        });
        await finish(ada!, vaultId, g);
      }
      expect(digest(await download(ada!, vaultId, g))).toEqual(digest(g.plain));
      expectFiles(g.attachmentId, 2);
    }
  });

  test("attachments: chunks racing the upload's delete are stored or refused as not found, never failed, and nothing of it stays readable", async () => {
    const [ada] = await org();
    const { vaultId, itemIds } = await vault([ada!]);
    const f = await sealFile(3 * ATTACHMENT_CHUNK_BYTES + 1);
    for (let round = 0; round < 100; round++) {
      const g = round === 0 ? f : { ...f, attachmentId: newId<AttachmentId>() };
      await begin(ada!, vaultId, itemIds[0]!, g);
      const deleted = new Promise((resolve) => setTimeout(resolve, round % 20)).then(() =>
        store.attachments.deleteAttachment({ vaultId, actorId: ada!.userId, attachmentId: g.attachmentId }),
      );
      const [gone, ...puts] = await Promise.allSettled([deleted, ...f.chunks.map((_, i) => put(ada!, vaultId, g, i))]);
      expect(gone.status).toBe("fulfilled");
      for (const p of puts) {
        if (p.status === "rejected") expect(p.reason).toMatchObject({ message: refusals.attachmentNotFound().message });
      }
      await refused(
        store.attachments.getAttachment({ vaultId, actorId: ada!.userId, attachmentId: g.attachmentId }),
        refusals.attachmentNotFound(),
      );
      for (let i = 0; i < f.chunks.length; i++)
        await refused(
          store.attachments.readChunk({ vaultId, actorId: ada!.userId, attachmentId: g.attachmentId, index: i }),
          refusals.attachmentNotFound(),
        );
    }
  });

  test("attachments go with their item's purge, the sweeper's trash purge, a rekey that drops their item's trash entry, and their vault", async () => {
    const [ada] = await org();
    const { vaultId, itemIds } = await vault([ada!], 4);
    const [purged, swept, rekeyed, kept] = itemIds as [ItemId, ItemId, ItemId, ItemId];
    const files = await Promise.all([purged, swept, rekeyed, kept].map(() => sealFile(ATTACHMENT_CHUNK_BYTES + 7)));
    const [onPurged, onSwept, onRekeyed, onKept] = files as [SealedFile, SealedFile, SealedFile, SealedFile];
    for (const [itemId, f] of [
      [purged, onPurged],
      [swept, onSwept],
      [rekeyed, onRekeyed],
      [kept, onKept],
    ] as const)
      await upload(ada!, vaultId, itemId, f);
    // An upload in progress goes with its item too.
    const unfinished = await sealFile(5);
    await begin(ada!, vaultId, purged, unfinished);
    await put(ada!, vaultId, unfinished, 0);
    const get = (f: SealedFile) => store.attachments.getAttachment({ vaultId, actorId: ada!.userId, attachmentId: f.attachmentId });

    // In the trash, an item keeps its files; purged, they go.
    await store.items.deleteItem({ vaultId, actorId: ada!.userId, itemId: purged, now: at() });
    expect(await get(onPurged)).toMatchObject({ complete: true });
    await store.items.purgeItem({ vaultId, actorId: ada!.userId, itemId: purged });
    for (const f of [onPurged, unfinished]) {
      await refused(get(f), refusals.attachmentNotFound());
      expectGone(f.attachmentId);
    }

    const longAgo = "2001-01-01T00:00:00.000Z";
    await store.items.deleteItem({ vaultId, actorId: ada!.userId, itemId: swept, now: longAgo });
    const counts = await store.housekeeping.purgeExpired({
      now: at(),
      invitesExpiredBefore: longAgo,
      trashDeletedBefore: "2001-01-02T00:00:00.000Z",
    });
    expect(counts.trash).toBe(1);
    await refused(get(onSwept), refusals.attachmentNotFound());
    expectGone(onSwept.attachmentId);

    await store.items.deleteItem({ vaultId, actorId: ada!.userId, itemId: rekeyed, now: at() });
    const newKey = randomBytes(32);
    await store.vaults.rekeyVault({
      vaultId,
      actorId: ada!.userId,
      rekey: {
        newKeys: [{ userId: ada!.userId, ...wrapFor(newKey, ada!, ada!) }],
        items: [{ itemId: kept, encryptedData: "BBBB", encryptedName: "BBBB" }],
        trash: [],
      },
      now: at(),
    });
    await refused(get(onRekeyed), refusals.attachmentNotFound());
    expectGone(onRekeyed.attachmentId);
    expect(digest(await download(ada!, vaultId, onKept))).toEqual(digest(onKept.plain));
    expect(await store.attachments.usage({ orgId: ada!.orgId })).toEqual({ bytes: sealedSizeOf(onKept.size), files: 1 });

    await store.vaults.deleteVault({ vaultId, actorId: ada!.userId });
    expectGone(onKept.attachmentId);
    expect(await store.attachments.usage({ orgId: ada!.orgId })).toEqual({ bytes: 0, files: 0 });
  });

  test("attachments: the sweeper deletes uploads unfinished past the window (and, for files, folders no attachment owns), nothing else; usage counts what is kept", async () => {
    const [ada] = await org();
    const { vaultId, itemIds } = await vault([ada!]);
    const [old, oldFinished, recent] = await Promise.all([sealFile(ATTACHMENT_CHUNK_BYTES + 1), sealFile(3), sealFile(4)]);
    const longAgo = "2002-01-01T00:00:00.000Z";
    const before = "2002-01-02T00:00:00.000Z";
    await begin(ada!, vaultId, itemIds[0]!, old!, { now: longAgo });
    await put(ada!, vaultId, old!, 0);
    await upload(ada!, vaultId, itemIds[0]!, oldFinished!, { now: longAgo });
    await begin(ada!, vaultId, itemIds[0]!, recent!);
    const dir = attachmentChunkDirs.get(store);
    const orphans = [newId<AttachmentId>(), newId<AttachmentId>()];
    if (dir)
      for (const [n, id] of orphans.entries()) {
        fs.mkdirSync(path.join(dir, id));
        fs.writeFileSync(path.join(dir, id, "0"), "left behind");
        if (n === 0) fs.utimesSync(path.join(dir, id), new Date("2001-12-31"), new Date("2001-12-31"));
      }
    expect(await store.attachments.usage({ orgId: ada!.orgId })).toEqual({
      bytes: sealedSizeOf(old!.size) + sealedSizeOf(3) + sealedSizeOf(4),
      files: 3,
    });
    const counts = await store.housekeeping.purgeExpired({ now: at(), invitesExpiredBefore: longAgo, uploadsStartedBefore: before });
    expect(counts.uploads).toBe(1);
    expect(await store.attachments.purgeStaleUploads({ startedBefore: before })).toBe(0);
    const get = (f: SealedFile) => store.attachments.getAttachment({ vaultId, actorId: ada!.userId, attachmentId: f.attachmentId });
    await refused(get(old!), refusals.attachmentNotFound());
    expectGone(old!.attachmentId);
    expect(await get(oldFinished!)).toMatchObject({ complete: true });
    expect(await get(recent!)).toMatchObject({ complete: false });
    expect(await store.attachments.usage({ orgId: ada!.orgId })).toEqual({ bytes: sealedSizeOf(3) + sealedSizeOf(4), files: 2 });
    if (dir) {
      // The old orphan is gone; one changed within the window may be an upload's under way, and stays.
      expect(orphans.map((id) => fs.existsSync(path.join(dir, id)))).toEqual([false, true]);
      fs.rmSync(path.join(dir, orphans[1]!), { recursive: true });
    }
  });
}
