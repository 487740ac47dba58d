/**
 * Pages fetched the first time they are shown, so that they are not part of the first page (the
 * send pages, the emergency access page): `lazyModule` makes the hook, `Loading` is shown meanwhile.
 */
import { useEffect, useState } from "preact/hooks";
import { Busy } from "./components/ui";

/** A hook that answers the module once it has loaded (at once after the first time). */
export function lazyModule<M>(load: () => Promise<M>): () => M | null {
  let loaded: M | null = null;
  return function useModule() {
    const [mod, setMod] = useState(loaded);
    useEffect(() => {
      if (mod) return;
      let gone = false;
      void load().then((m) => {
        loaded = m;
        if (!gone) setMod(m);
      });
      return () => {
        gone = true;
      };
    }, []);
    return mod;
  };
}

export const Loading = () => (
  <main>
    <Busy label="Loading…" />
  </main>
);
