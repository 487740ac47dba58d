/** Who could sign an item link: a member at the roster seq it names, with the key the roster recorded for them. */
import { fromBase64, type Bytes } from "../../../protocol/encoding";
import { SecurityError } from "../../errors";
import { keyFingerprint } from "../../../protocol/crypto/keys";
import { linkHash } from "../../../protocol/formats/roster";
import { mayDo, type VaultRole } from "../../../protocol/vault-roles";
import { itemLinkSignatureVerifies, type ItemLink } from "../../../protocol/formats/item-log";
import type { Rosters } from "../roster";
import type { Trust } from "../trust";
import type { VerifiedRoster } from "../types";
import { broken } from "./chain";

/** Each member's recorded key and role over the roster's seqs: who could sign an item link at a given roster seq. */
function membershipAt(roster: VerifiedRoster): (userId: string, rosterSeq: number) => { key: string; role: VaultRole } | undefined {
  const spans = new Map<string, Array<{ from: number; to: number; key: string; role: VaultRole }>>();
  const open = (userId: string, seq: number, key: string, role: VaultRole) => {
    close(userId, seq);
    const list = spans.get(userId) ?? [];
    list.push({ from: seq, to: Infinity, key, role });
    spans.set(userId, list);
  };
  const close = (userId: string, seq: number) => {
    const last = spans.get(userId)?.at(-1);
    if (last && last.to === Infinity) last.to = seq;
  };
  for (const link of roster.links) {
    if (link.op === "create" || link.op === "add") open(link.subjectId!, link.seq, link.subjectKey!, link.role!);
    else if (link.op === "adopt") for (const m of link.members!) open(m.userId, link.seq, m.key, m.role);
    else if (link.op === "role") open(link.subjectId!, link.seq, link.subjectKey!, link.role!);
    else if (link.op === "remove") close(link.subjectId!, link.seq);
    else if (link.op === "rotate") {
      // Their keys from this link on: the role goes on.
      const role = spans.get(link.subjectId!)?.at(-1)?.role;
      if (role) open(link.subjectId!, link.seq, link.subjectKey!, role);
    }
  }
  return (userId, rosterSeq) => {
    const span = spans.get(userId)?.find((s) => s.from <= rosterSeq && rosterSeq < s.to);
    return span && { key: span.key, role: span.role };
  };
}

/** Each link's actor was a member at the roster seq it names (an owner or admin for a rekey), and signed it with the key the roster recorded. */
export async function checkSigners(
  trust: Trust,
  rosters: Rosters,
  vaultId: string,
  links: readonly ItemLink[],
  given: VerifiedRoster,
): Promise<void> {
  let roster = given;
  // A link signed against a newer roster than the one given (a change landed meanwhile): the roster is read once more.
  if (links.some((l) => l.rosterSeq > roster.state.seq)) roster = (await rosters.verifiedRoster(vaultId)) ?? roster;
  const memberAt = membershipAt(roster);
  // Each link names the roster link it was signed on by its hash: one this client's verified roster does not have there is another history.
  const rosterHashes = new Map<number, string>();
  for (const seq of new Set(links.map((l) => l.rosterSeq))) {
    const rosterLink = roster.links[seq];
    if (rosterLink) rosterHashes.set(seq, await linkHash(rosterLink));
  }
  const verifiedKeys = new Map<string, Bytes>();
  const signed: Array<{ link: ItemLink; key: Bytes }> = [];
  for (const link of links) {
    if (link.rosterSeq > roster.state.seq)
      throw broken(vaultId, `link ${link.seq} names roster link ${link.rosterSeq}, past the roster's head ${roster.state.seq}`);
    if (link.rosterHead !== rosterHashes.get(link.rosterSeq))
      throw new SecurityError(
        "ROSTER_ROLLBACK",
        `item link ${link.seq} of vault ${vaultId} was signed on another roster link ${link.rosterSeq} than the one this client verified: the server shows members different rosters (a fork)`,
      );
    const member = memberAt(link.actorId, link.rosterSeq);
    if (!member) throw broken(vaultId, `link ${link.seq} is by ${link.actorId}, not a member at roster link ${link.rosterSeq}`);
    if (link.op === "rekey" && !mayDo(member.role, "rekey"))
      throw broken(vaultId, `link ${link.seq} is a rekey by a vault ${member.role}, who may not rekey`);
    let key = verifiedKeys.get(`${link.actorId}/${member.key}`);
    if (!key) {
      const keys = await trust.signerKeysOf(link.actorId, member.key);
      if ((await keyFingerprint(keys)) !== member.key)
        throw new SecurityError(
          "KEY_CHANGED",
          `item link ${link.seq} of vault ${vaultId}: the signer's keys are not the ones the roster recorded`,
          link.actorId,
        );
      key = fromBase64(keys.signingPublicKey);
      verifiedKeys.set(`${link.actorId}/${member.key}`, key);
    }
    signed.push({ link, key });
  }
  // The signatures, checked side by side (WebCrypto runs them off the main thread), the first bad one named.
  const verdicts = await Promise.all(signed.map(({ link, key }) => itemLinkSignatureVerifies(link, key)));
  const bad = verdicts.indexOf(false);
  if (bad >= 0) {
    const { link } = signed[bad]!;
    throw new SecurityError(
      "BAD_SIGNATURE",
      `item link ${link.seq} of vault ${vaultId} is not signed by its actor ${link.actorId}`,
      link.actorId,
    );
  }
}
