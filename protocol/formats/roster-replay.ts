/**
 * A whole signed roster replayed by a client (the protocol, link by link: protocol/formats/roster.ts): each
 * link's format and place, its actor's right, and its signature by the key the chain recorded for
 * them. Pure: WebCrypto only.
 */
import { fromBase64 } from "../encoding";
import { SecurityError } from "../errors";
import { keyFingerprint } from "../crypto/keys";
import { fail, RosterLinkError } from "./links";
import { applyLink, linkHash, linkSignatureVerifies, memberDigest, parseLink, type RosterLink, type RosterState } from "./roster";

/** A signer's public keys as the server hands them out (checked by the caller: self-signature, pins). */
export interface SignerKeys {
  publicKey: string;
  signingPublicKey: string;
}

/**
 * Replays a chain from its first link: each link's format, its place in the chain, its actor's
 * right in the state before it, and its signature by the actor's key, which must be the key the
 * chain itself recorded for them (at create, add or adopt), passed to `signerKeys` so that keys
 * which are not those are refused before anything trusts them. Throws `SecurityError`
 * (`ROSTER_BROKEN`, or `BAD_SIGNATURE` for a signature) naming the link. An empty chain is null.
 */
export async function replayRoster(
  vaultId: string,
  rawLinks: readonly unknown[],
  signerKeys: (userId: string, recordedKey: string) => Promise<SignerKeys>,
): Promise<RosterState | null> {
  let state: RosterState | null = null;
  const checkedKeys = new Map<string, SignerKeys>();
  for (const [index, raw] of rawLinks.entries()) {
    const where = `roster link ${index} of vault ${vaultId}`;
    let link: RosterLink, next: RosterState;
    try {
      link = parseLink(raw);
      if (link.vaultId !== vaultId) fail("vaultId", `it names vault ${link.vaultId}`);
      if (link.seq !== index) fail("seq", `it says seq ${link.seq}`);
      const digest: string | undefined = link.op === "rekey" && state ? await memberDigest(state.members) : undefined;
      next = applyLink(state, link, await linkHash(link), digest);
    } catch (err) {
      if (err instanceof RosterLinkError) throw new SecurityError("ROSTER_BROKEN", `${where} is invalid (${err.field}): ${err.message}`);
      throw err;
    }
    // The actor's key as the chain knows it: from the state before, or this very link (create, adopt).
    const recorded = (state?.members.get(link.actorId) ?? next.members.get(link.actorId))!.key;
    let keys = checkedKeys.get(`${link.actorId}/${recorded}`);
    if (!keys) checkedKeys.set(`${link.actorId}/${recorded}`, (keys = await signerKeys(link.actorId, recorded)));
    if ((await keyFingerprint(keys)) !== recorded) {
      throw new SecurityError("KEY_CHANGED", `${where}: the signer's keys are not the ones the roster recorded for them`, link.actorId);
    }
    if (!(await linkSignatureVerifies(link, fromBase64(keys.signingPublicKey)))) {
      throw new SecurityError("BAD_SIGNATURE", `${where} is not signed by its actor ${link.actorId}`, link.actorId);
    }
    state = next;
  }
  return state;
}
