/**
 * fastest-validator through Moleculer, with errors that never carry the rejected value: Moleculer
 * logs rejected calls (at debug), and a rejected value may be a secret (an auth hash, a token).
 */
import { Validators } from "moleculer";

// The default messages of these three quote the value.
const MESSAGES = {
  arrayUnique: "The '{field}' field holds a value more than once.",
  arrayEnum: "The '{field}' field holds a value that is not one of the '{expected}' values.",
  objectStrict: "The object '{field}' contains forbidden keys.",
};

type Refusal = { type: string; field?: string; message?: string };
type Check = ((params: unknown, opts?: unknown) => true | Refusal[]) & { async?: boolean };

/**
 * The fields whose rule converts text (a query string's `limit`, `since`, ...), with their type.
 * fastest-validator converts whatever it is given (`Number(["1"])` is 1), and a query string
 * parses `since[]=1` as a list and `since[a]=1` as an object: only text, or a value of the rule's
 * own type, is converted; a list or an object is refused as a wrong type.
 */
function convertedFields(schema: Record<string, unknown>): Array<[string, string]> {
  return Object.entries(schema).flatMap(([field, rule]) => {
    const r = rule as { convert?: unknown; type?: unknown } | null;
    return !field.startsWith("$$") && typeof r === "object" && r !== null && r.convert === true && typeof r.type === "string"
      ? [[field, r.type] as [string, string]]
      : [];
  });
}

function refusedValues(params: unknown, fields: ReadonlyArray<[string, string]>): Refusal[] {
  const values = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  return fields
    .filter(([field]) => typeof values[field] === "object" && values[field] !== null)
    .map(([field, type]) => ({ type, field, message: `The '${field}' field must be a ${type}.` }));
}

export class SafeValidator extends Validators.Fastest {
  constructor() {
    // `custom` checks (lib/http/params.ts base64) take (value, errors) and push their refusals.
    super({ messages: MESSAGES, useNewCustomCheckerFunction: true });
  }

  // Moleculer's typings say a checker returns a boolean; at runtime it returns true or the errors.
  // Compiled at an action's first call, not at start: compiling every action's checks was about
  // 70 ms of a cold start; a check compiles in well under a millisecond.
  override compile(schema: Record<string, unknown>): ReturnType<Validators.Fastest["compile"]> {
    let check: Check | undefined;
    const converted = convertedFields(schema);
    const safe: Check = (params, opts) => {
      const refused = refusedValues(params, converted);
      if (refused.length > 0) return refused;
      check ??= this.compileNow(schema);
      const res = check(params, opts);
      return res === true ? true : res.map(({ type, field, message }) => ({ type, field, message }));
    };
    return safe as unknown as ReturnType<Validators.Fastest["compile"]>;
  }

  private compileNow(schema: Record<string, unknown>): Check {
    const check = super.compile(schema) as unknown as Check;
    if (check.async) throw new Error("Async parameter checks are not used here");
    return check;
  }
}
