/** A grant's line in either list: the other person, the level and the wait. */
import type { EmergencyGrant } from "../../../../sdk/client";
import { LEVEL_NAME, waitWords } from "./words";

export function GrantTitle({ grant }: { grant: EmergencyGrant }) {
  return (
    <>
      <strong>{grant.email}</strong>{" "}
      <span class="meta">
        {LEVEL_NAME[grant.level]}, wait {waitWords(grant.waitHours)}
      </span>
    </>
  );
}
