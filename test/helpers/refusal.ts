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

/** A refusal as a test names it: its code, message and field, compared with the named constructor's own. */
export const asRefusal = (err: AppError) => ({ code: err.type, message: err.message, field: (err.data as { field?: string })?.field });

/** What a rule does, for a table row: "ok", or the refusal it throws in `asRefusal`'s terms. */
export const outcomeOf = (fn: () => unknown) => {
  try {
    fn();
    return "ok";
  } catch (err) {
    return asRefusal(err as AppError);
  }
};
