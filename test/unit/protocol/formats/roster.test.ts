/**
 * The roster protocol without a server: the published test vectors (README, "Signed vault
 * roster"), reproduced by the SDK's WebCrypto code and by the server's node:crypto code; and the
 * rules a link must follow from the state before it, as plain functions.
 */
import type { UserId } from "../../../../lib/domain/ids";
import { createHash, createPrivateKey, sign } from "node:crypto";
import vectors from "../../../../protocol/vectors/roster-vectors.json";
import { checkRosterLink } from "../../../../lib/domain/vaults/roster";
import { signatureVerifies } from "../../../../lib/domain/accounts/keys";
import {
  applyLink,
  canonicalJson,
  linkBytes,
  linkHash,
  linkSignatureVerifies,
  linkSigningBytes,
  memberSetBytes,
  parseLink,
  type RosterLink,
  type RosterState,
} from "../../../../protocol/formats/roster";
import { RosterLinkError, sha256Hex } from "../../../../protocol/formats/links";
import { fromBase64 } from "../../../../protocol/encoding";

const ed25519FromSeed = (seedHex: string) =>
  createPrivateKey({
    key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(seedHex, "hex")]),
    format: "der",
    type: "pkcs8",
  });

const links = vectors.vectors.map((v) => v.link as RosterLink);
// The vectors' users, as the server's id type.
const [alice, bob] = [links[0]!.actorId as UserId, links[1]!.subjectId! as UserId];

/** The state after the vectors' chain, replayed with the hashes the vectors give. */
function replayVectors(upTo = links.length): RosterState {
  let state: RosterState | null = null;
  links.slice(0, upTo).forEach((link, i) => {
    state = applyLink(state, link, vectors.vectors[i]!.hash, link.op === "rekey" ? vectors.memberSet.digest : undefined);
  });
  return state!;
}

function refusedWith(field: string, fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RosterLinkError);
    expect((err as RosterLinkError).field).toBe(field);
    return;
  }
  throw new Error(`not refused (expected field ${field})`);
}

describe("roster test vectors", () => {
  test.each(vectors.vectors.map((v, i) => [i, v] as const))(
    "link %i: canonical bytes, hash and signature, on both code paths",
    async (_i, v) => {
      const link = parseLink(v.link);
      expect(canonicalJson({ ...link, sig: undefined })).toBe(v.canonical);
      expect(Buffer.from(linkBytes(link)).toString("utf8")).toBe(v.canonical);
      expect(Buffer.from(linkSigningBytes(link)).toString("utf8")).toBe(`vault-roster-link/v1\n${v.canonical}`);
      expect(await linkHash(link)).toBe(v.hash);
      // Ed25519 is deterministic: the seed reproduces the signature byte for byte.
      expect(sign(null, linkSigningBytes(link), ed25519FromSeed(vectors.signingSeedHex)).toString("base64")).toBe(link.sig);
      expect(await linkSignatureVerifies(link, fromBase64(vectors.signingPublicKey))).toBe(true);
      expect(signatureVerifies(Buffer.from(linkSigningBytes(link)), Buffer.from(link.sig, "base64"), vectors.signingPublicKey)).toBe(true);
    },
  );

  test("each link's prev is the hash of the one before; the member digest is over the members sorted by user id", async () => {
    expect(links[0]!.prev).toBe("0".repeat(64));
    for (let i = 1; i < links.length; i++) expect(links[i]!.prev).toBe(vectors.vectors[i - 1]!.hash);
    expect(Buffer.from(memberSetBytes(vectors.memberSet.members as any)).toString("utf8")).toBe(vectors.memberSet.canonical);
    expect(await sha256Hex(memberSetBytes(vectors.memberSet.members as any))).toBe(vectors.memberSet.digest);
    expect(links[2]!.memberDigest).toBe(vectors.memberSet.digest);
  });

  test("one changed byte anywhere in a link breaks its signature", async () => {
    for (const link of links) {
      for (const changed of [
        { ...link, at: link.at.replace("12:0", "13:0") },
        { ...link, seq: link.seq + 1 },
        { ...link, keyVersion: link.keyVersion + 1 },
      ]) {
        expect(await linkSignatureVerifies(changed, fromBase64(vectors.signingPublicKey))).toBe(false);
      }
    }
  });

  test("the chain replays: alice owns, bob is a member, the key is at version 2 for both, and alice's wrap is the one she re-wrapped", () => {
    const state = replayVectors();
    expect(Object.fromEntries([...state.members].map(([id, m]) => [id, m.role]))).toEqual({ [alice]: "owner", [bob]: "member" });
    expect(state.keyVersion).toBe(2);
    expect([...state.wraps.values()].map((w) => [w.keyVersion, w.senderId])).toEqual([
      [2, alice],
      [2, alice],
    ]);
    expect(state.wraps.get(alice)!.sha256).toBe("5".repeat(64));
    expect(state.wraps.get(bob)!.sha256).toBe(replayVectors(3).wraps.get(bob)!.sha256);
    expect(state.head).toBe(vectors.vectors[3]!.hash);
  });
});

describe("personal wraps name the account state they were made under (test vectors)", () => {
  const personal = vectors.personalVectors.map((v) => v.link as RosterLink);

  test.each(vectors.personalVectors.map((v, i) => [i, v] as const))("link %i: canonical bytes, hash and signature", async (_i, v) => {
    const link = parseLink(v.link);
    expect(Buffer.from(linkBytes(link)).toString("utf8")).toBe(v.canonical);
    expect(await linkHash(link)).toBe(v.hash);
    expect(sign(null, linkSigningBytes(link), ed25519FromSeed(vectors.signingSeedHex)).toString("base64")).toBe(link.sig);
    // The label is signed: another statement version breaks the signature.
    const relabelled = { ...link, wraps: [{ ...link.wraps[0]!, kdfVersion: link.wraps[0]!.kdfVersion! + 1 }] };
    expect(await linkSignatureVerifies(relabelled, fromBase64(vectors.signingPublicKey))).toBe(false);
  });

  test("the chain keeps each wrap's label: created under statement 1, re-wrapped under statement 2", () => {
    const created = applyLink(null, personal[0]!, vectors.personalVectors[0]!.hash);
    expect(created.wraps.get(alice)).toMatchObject({ kdfVersion: 1, keyLogVersion: 1 });
    const rewrapped = applyLink(created, personal[1]!, vectors.personalVectors[1]!.hash);
    expect(rewrapped.wraps.get(alice)).toMatchObject({ sha256: "7".repeat(64), kdfVersion: 2, keyLogVersion: 1 });
  });

  test("a label is both versions or none, whole numbers from 1, and only on a personal vault's wrap", () => {
    const wrap = personal[0]!.wraps[0]!;
    refusedWith("wraps", () => parseLink({ ...personal[0]!, wraps: [{ ...wrap, keyLogVersion: undefined }] }));
    refusedWith("wraps", () => parseLink({ ...personal[0]!, wraps: [{ userId: wrap.userId, sha256: wrap.sha256, keyLogVersion: 1 }] }));
    refusedWith("kdfVersion", () => parseLink({ ...personal[0]!, wraps: [{ ...wrap, kdfVersion: 0 }] }));
    refusedWith("keyLogVersion", () => parseLink({ ...personal[0]!, wraps: [{ ...wrap, keyLogVersion: 1.5 }] }));
    refusedWith("wraps", () => parseLink({ ...personal[0]!, wraps: [{ ...wrap, note: "x" }] }));
    // A shared vault's wraps are to the members' recorded keys: a label there is refused, at creation and later.
    refusedWith("wraps", () =>
      applyLink(null, { ...links[0]!, wraps: [{ ...links[0]!.wraps[0]!, kdfVersion: 1, keyLogVersion: 1 }] }, "h"),
    );
    refusedWith("wraps", () =>
      applyLink(replayVectors(3), { ...links[3]!, wraps: [{ ...links[3]!.wraps[0]!, kdfVersion: 1, keyLogVersion: 1 }] }, "h"),
    );
    // Unlabelled wraps (links made before labels) stay as they were.
    expect(replayVectors().wraps.get(alice)!.kdfVersion).toBeUndefined();
  });

  test("the server takes a labelled wrap for the request's wrap: it checks the hash, the label is the signer's word", () => {
    const created = applyLink(null, personal[0]!, vectors.personalVectors[0]!.hash);
    const wrapped = Buffer.alloc(40, 9);
    const unsigned = {
      ...personal[1]!,
      sig: undefined,
      wraps: [{ userId: alice, sha256: createHash("sha256").update(wrapped).digest("hex"), kdfVersion: 2, keyLogVersion: 1 }],
    };
    const link = { ...unsigned, sig: sign(null, linkSigningBytes(unsigned), ed25519FromSeed(vectors.signingSeedHex)).toString("base64") };
    const actor = { userId: alice, publicKey: Buffer.alloc(8).toString("base64"), signingPublicKey: vectors.signingPublicKey };
    const change = {
      op: "rewrap" as const,
      subjectId: alice,
      subjectKey: "a".repeat(64),
      wraps: [{ userId: alice, encryptedVaultKey: wrapped.toString("base64") }],
    };
    expect(checkRosterLink(link, { before: created, actor, keyVersionAfter: 1, change }).seq).toBe(1);
    const otherWrap = [{ userId: alice, encryptedVaultKey: Buffer.alloc(40, 8).toString("base64") }];
    expect(() => checkRosterLink(link, { before: created, actor, keyVersionAfter: 1, change: { ...change, wraps: otherWrap } })).toThrow(
      expect.objectContaining({ data: { field: "rosterLink.wraps" } }),
    );
  });
});

describe("roster link format", () => {
  const link = links[1]!;
  test.each([
    ["unknown field", { ...link, note: "x" }, "note"],
    ["missing field", { ...link, subjectKey: undefined }, "subjectKey"],
    ["field of another operation", { ...link, memberDigest: "0".repeat(64) }, "memberDigest"],
    ["upper-case id", { ...link, actorId: link.actorId.toUpperCase() }, "actorId"],
    ["fractional seq", { ...link, seq: 1.5 }, "seq"],
    ["negative seq", { ...link, seq: -1 }, "seq"],
    ["timestamp without milliseconds", { ...link, at: "2026-11-22T12:01:00Z" }, "at"],
    ["impossible date", { ...link, at: "2026-02-30T12:01:00.000Z" }, "at"],
    ["short signature", { ...link, sig: Buffer.alloc(63).toString("base64") }, "sig"],
    ["wraps out of order", { ...links[2]!, wraps: [...links[2]!.wraps].reverse() }, "wraps"],
    ["unknown operation", { ...link, op: "grant" }, "op"],
    ["not an object", [link], "rosterLink"],
  ])("%s is refused", (_what, raw, field) => refusedWith(field as string, () => parseLink(raw)));
});

describe("roster rules (applyLink)", () => {
  // Rules are checked before signatures: these links keep the vectors' signatures, which no longer match, on purpose.
  const afterAdd = () => replayVectors(2);
  const next = (fields: Partial<RosterLink>): RosterLink =>
    ({
      vaultId: links[0]!.vaultId,
      seq: 2,
      prev: vectors.vectors[1]!.hash,
      actorId: alice,
      at: "2026-11-22T12:03:00.000Z",
      keyVersion: 1,
      wraps: [],
      sig: links[0]!.sig,
      op: "role",
      ...fields,
    }) as RosterLink;

  test("a plain member may not add, re-role, remove others or rekey", () => {
    const carol = "2d3e4f50-6a7b-4c8d-9eaf-b0c1d2e3f405";
    refusedWith("actorId", () =>
      applyLink(
        afterAdd(),
        next({
          op: "add",
          actorId: bob,
          subjectId: carol,
          role: "member",
          subjectKey: "c".repeat(64),
          wraps: [{ userId: carol, sha256: "5".repeat(64) }],
        }),
        "h",
      ),
    );
    refusedWith("actorId", () =>
      applyLink(afterAdd(), next({ op: "role", actorId: bob, subjectId: bob, role: "owner", subjectKey: "b".repeat(64) }), "h"),
    );
    refusedWith("actorId", () =>
      applyLink(afterAdd(), next({ op: "remove", actorId: bob, subjectId: alice, subjectKey: "a".repeat(64) }), "h"),
    );
    refusedWith("actorId", () => applyLink(afterAdd(), { ...links[2]!, actorId: bob }, "h", vectors.memberSet.digest));
    // Leaving is anyone's right.
    expect(
      applyLink(afterAdd(), next({ op: "remove", actorId: bob, subjectId: bob, subjectKey: "b".repeat(64) }), "h").members.has(bob),
    ).toBe(false);
  });

  test("someone outside the vault signs nothing into it", () => {
    refusedWith("actorId", () =>
      applyLink(
        afterAdd(),
        next({ op: "role", actorId: "2d3e4f50-6a7b-4c8d-9eaf-b0c1d2e3f405", subjectId: bob, role: "admin", subjectKey: "b".repeat(64) }),
        "h",
      ),
    );
  });

  test("a rewrap: a member's own wrap only, for the key they hold, under their recorded key", () => {
    const afterRekey = () => replayVectors(3);
    const rewrap = (fields: Partial<RosterLink>): RosterLink => ({ ...links[3]!, ...fields }) as RosterLink;
    expect(applyLink(afterRekey(), rewrap({}), "h").wraps.get(alice)!.sha256).toBe("5".repeat(64));
    // Bob (a plain member) re-wraps his own: allowed, whatever his role.
    const bobs = rewrap({
      actorId: bob,
      subjectId: bob,
      subjectKey: afterRekey().members.get(bob)!.key,
      wraps: [{ userId: bob, sha256: "6".repeat(64) }],
    });
    expect(applyLink(afterRekey(), bobs, "h").wraps.get(bob)!.sha256).toBe("6".repeat(64));
    refusedWith("subjectId", () => applyLink(afterRekey(), rewrap({ subjectId: bob }), "h"));
    refusedWith("subjectKey", () => applyLink(afterRekey(), rewrap({ subjectKey: "b".repeat(64) }), "h"));
    refusedWith("keyVersion", () => applyLink(afterRekey(), rewrap({ keyVersion: 3 }), "h"));
    refusedWith("wraps", () => applyLink(afterRekey(), rewrap({ wraps: [{ userId: bob, sha256: "6".repeat(64) }] }), "h"));
    refusedWith("wraps", () => applyLink(afterRekey(), rewrap({ wraps: [] }), "h"));
  });

  test("the last owner stays; a removal needs a rekey after it", () => {
    refusedWith("subjectId", () => applyLink(afterAdd(), next({ op: "remove", subjectId: alice, subjectKey: "a".repeat(64) }), "h"));
    refusedWith("role", () =>
      applyLink(afterAdd(), next({ op: "role", subjectId: alice, role: "admin", subjectKey: "a".repeat(64) }), "h"),
    );
    const removed = applyLink(afterAdd(), next({ op: "remove", subjectId: bob, subjectKey: "b".repeat(64) }), "h");
    expect([removed.rekeyRequired, removed.wraps.has(bob)]).toEqual([true, false]);
  });

  test("seq, prev, vault, key version, the subject's recorded key, the member digest and the wraps must follow", () => {
    refusedWith("seq", () =>
      applyLink(afterAdd(), next({ seq: 3, op: "role", subjectId: bob, role: "admin", subjectKey: "b".repeat(64) }), "h"),
    );
    refusedWith("prev", () =>
      applyLink(afterAdd(), next({ prev: "f".repeat(64), subjectId: bob, role: "admin", subjectKey: "b".repeat(64) }), "h"),
    );
    refusedWith("vaultId", () =>
      applyLink(
        afterAdd(),
        next({ vaultId: "3e4f5061-7a8b-4c9d-8eaf-c0d1e2f30415", subjectId: bob, role: "admin", subjectKey: "b".repeat(64) }),
        "h",
      ),
    );
    refusedWith("keyVersion", () =>
      applyLink(afterAdd(), next({ keyVersion: 2, subjectId: bob, role: "admin", subjectKey: "b".repeat(64) }), "h"),
    );
    refusedWith("subjectKey", () => applyLink(afterAdd(), next({ subjectId: bob, role: "admin", subjectKey: "e".repeat(64) }), "h"));
    refusedWith("memberDigest", () => applyLink(afterAdd(), links[2]!, "h", "0".repeat(64)));
    refusedWith("wraps", () => applyLink(afterAdd(), { ...links[2]!, wraps: links[2]!.wraps.slice(0, 1) }, "h", vectors.memberSet.digest));
    refusedWith("op", () => applyLink(afterAdd(), { ...links[0]!, seq: 2, prev: vectors.vectors[1]!.hash }, "h"));
    refusedWith("seq", () => applyLink(null, links[1]!, "h"));
  });

  test("the server's check: the link must be the caller's, signed by them, and describe the request", () => {
    const state = replayVectors(1);
    const actor = { userId: alice, publicKey: Buffer.alloc(8).toString("base64"), signingPublicKey: vectors.signingPublicKey };
    const add = { op: "add" as const, subjectId: bob, role: "member" as const, subjectKey: "b".repeat(64), wraps: [] };
    expect(() => checkRosterLink(links[1]!, { before: state, actor: { ...actor, userId: bob }, keyVersionAfter: 1, change: add })).toThrow(
      expect.objectContaining({ data: { field: "rosterLink.actorId" } }),
    );
    expect(() => checkRosterLink({ ...links[1]!, sig: links[0]!.sig }, { before: state, actor, keyVersionAfter: 1, change: add })).toThrow(
      expect.objectContaining({ data: { field: "rosterLink.sig" } }),
    );
    expect(() => checkRosterLink(links[1]!, { before: state, actor, keyVersionAfter: 1, change: { ...add, role: "admin" } })).toThrow(
      expect.objectContaining({ data: { field: "rosterLink.role" } }),
    );
  });
});
