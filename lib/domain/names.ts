/** Names as the server stores them (the rule itself: protocol/names.ts, shared with the roster and the clients). */
import { badName } from "./refusals";
import { nameProblem } from "../../protocol/names";

/** A vault's name, as given: `400 INVALID` (field `name`) for one that is blank or too long. */
export function decideVaultName(raw: string): string {
  const problem = nameProblem(raw);
  if (problem) throw badName("name", problem);
  return raw;
}

/** An organization's name, trimmed (the default when none is given): `400 INVALID` (field `orgName`) for a blank one. */
export function decideOrgName(raw: string | undefined): string {
  const name = (raw ?? "My organization").trim();
  const problem = nameProblem(name);
  if (problem) throw badName("orgName", problem);
  return name;
}
