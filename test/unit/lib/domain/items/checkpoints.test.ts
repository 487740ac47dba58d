/** A checkpoint's link (lib/domain/items/checkpoints.ts), as a table: kept, or the named refusal. */
import { requireCheckpointLink } from "../../../../../lib/domain/items/checkpoints";
import { checkpointWithoutLink } from "../../../../../lib/domain/items/refusals";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

test.each<[string, { seq: number } | undefined, unknown]>([
  ["a link", { seq: 3 }, "ok"],
  ["none", undefined, asRefusal(checkpointWithoutLink())],
])("a checkpoint with %s", (_what, link, expected) => {
  expect(outcomeOf(() => requireCheckpointLink(link))).toEqual(expected);
});
