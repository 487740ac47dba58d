/** An organization read (lib/domain/orgs/reads.ts), as a table: kept, or the named refusal. */
import { requireOrg } from "../../../../../lib/domain/orgs/reads";
import { orgNotFound } from "../../../../../lib/domain/orgs/refusals";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

test.each<[string, { name: string } | null | undefined, unknown]>([
  ["the organization, still there", { name: "Acme" }, "ok"],
  ["gone (null)", null, asRefusal(orgNotFound())],
  ["gone (undefined)", undefined, asRefusal(orgNotFound())],
])("requireOrg: %s", (_what, org, expected) => {
  expect(outcomeOf(() => requireOrg(org))).toEqual(expected);
});
