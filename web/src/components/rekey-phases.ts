/** A rekey's phases, as a progress line names them: on a vault's page and when someone leaves the organization. */
import type { RekeyProgress } from "../../../sdk";

export const PHASES: Record<RekeyProgress["phase"], string> = {
  items: "Re-encrypting items",
  wraps: "Wrapping the new key for members",
  upload: "Uploading",
};
