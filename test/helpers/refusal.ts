/** A rule's outcome as a word: "ok" when it passes, else the refusal's type (`INVALID`, `FORBIDDEN`, ...). */
import type { AppError } from "../../lib/errors";

export const code = (fn: () => void) => {
  try {
    fn();
    return "ok";
  } catch (err) {
    return (err as AppError).type;
  }
};
