/** The rekey's exact-set checks (contract section 5). */
import { conflict, invalid } from "../errors";

function assertExactSet(current: Iterable<string>, given: readonly string[], field: string, what: string): void {
  const expected = new Set(current);
  const seen = new Set<string>();
  for (const id of given) {
    if (seen.has(id)) throw invalid(`${what} ${id} appears twice`, field);
    seen.add(id);
    if (!expected.has(id)) throw invalid(`${what} ${id} is not in the vault`, field);
  }
  if (seen.size !== expected.size) throw invalid(`${expected.size - seen.size} ${what}(s) of the vault missing`, field);
}

/** `newKeys` holds exactly one entry per current member: none missing, none extra, no duplicates. */
export function assertExactMemberSet(currentMemberIds: Iterable<string>, newKeyUserIds: readonly string[]): void {
  assertExactSet(currentMemberIds, newKeyUserIds, "newKeys", "member");
}

/** `items` holds exactly the vault's current items. */
export function assertExactItemSet(currentItemIds: Iterable<string>, givenItemIds: readonly string[]): void {
  assertExactSet(currentItemIds, givenItemIds, "items", "item");
}

/** A `keyVersion` the client states must be the vault's current one (`409 CONFLICT`). */
export function assertKeyVersion(current: number, stated: number | undefined): void {
  if (stated !== undefined && stated !== current) {
    throw conflict(`The vault's key version is ${current}, not ${stated}`, "keyVersion");
  }
}
