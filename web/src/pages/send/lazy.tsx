/**
 * Where the send pages load: open.tsx (a send's link opened, with or without an account) and
 * sends.tsx (the signed-in Sends page), each fetched the first time it is shown, so that neither is
 * part of the first page.
 */
import { useEffect, useState } from "preact/hooks";
import { Busy } from "../../components/ui";

/** A hook that answers the module once it has loaded (at once after the first time). */
function lazyModule<M>(load: () => Promise<M>): () => M | null {
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

const useOpenModule = lazyModule(() => import("./open"));
const useSendsModule = lazyModule(() => import("./sends"));

const Loading = () => (
  <main>
    <Busy label="Loading…" />
  </main>
);

/** `#/send/<id>/<secret>`: keyed by the caller on both, so that another link starts afresh. */
export function OpenSendPage(props: { sendId: string; secret: string }) {
  const mod = useOpenModule();
  return mod ? <mod.OpenSend {...props} /> : <Loading />;
}

export function SendsPage() {
  const mod = useSendsModule();
  return mod ? <mod.Sends /> : <Loading />;
}
