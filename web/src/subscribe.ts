/** The web vault's module-level state (the session, the library, the offline flag): how a component follows one. */
import { useEffect, useState } from "preact/hooks";

/**
 * Re-renders the calling component whenever any of `listeners` is called, until it unmounts. The
 * listener is added after the first paint: a change between the first render and then would be
 * missed, so the component renders once more as it subscribes.
 */
export function useListeners(listeners: Set<() => void>): void {
  const [, rerender] = useState(0);
  useEffect(() => {
    const listener = () => rerender((n) => n + 1);
    listeners.add(listener);
    listener();
    return () => void listeners.delete(listener);
  }, []);
}
