/**
 * One rule for every adapter: when the database cannot be reached, a store call fails with
 * AppError UNAVAILABLE (503, a generic body) instead of a driver error (500). The caller may retry.
 */
import { AppError } from "../errors";
import { AGGREGATES, type Store } from "./port";

export function withUnavailableErrors(store: Store, isUnavailable: (err: unknown) => boolean): Store {
  const wrap = (err: unknown): never => {
    if (!(err instanceof AppError) && isUnavailable(err)) throw new AppError("UNAVAILABLE", "The database is unavailable");
    throw err;
  };
  const wrapped = { ...store, close: () => store.close() } as Store;
  for (const aggregate of AGGREGATES) (wrapped as unknown as Record<string, object>)[aggregate] = wrapMethods(store[aggregate], wrap);
  return wrapped;
}

/** Each method is wrapped once, on first use, not on every call. */
function wrapMethods<T extends object>(target: T, wrap: (err: unknown) => never): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      let fn = wrapped.get(prop);
      if (!fn) {
        fn = (...args: unknown[]) => {
          try {
            const out = (value as (...a: unknown[]) => unknown).apply(t, args);
            return out instanceof Promise ? out.catch(wrap) : out;
          } catch (err) {
            return wrap(err);
          }
        };
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}
