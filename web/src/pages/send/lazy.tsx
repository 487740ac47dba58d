/**
 * Where the send pages load: open.tsx (a send's link opened, with or without an account) and
 * sends.tsx (the signed-in Sends page), each fetched the first time it is shown, so that neither is
 * part of the first page.
 */
import { lazyModule, Loading } from "../../lazy-module";

const useOpenModule = lazyModule(() => import("./open"));
const useSendsModule = lazyModule(() => import("./sends"));

/** `#/send/<id>/<secret>`: keyed by the caller on both, so that another link starts afresh. */
export function OpenSendPage(props: { sendId: string; secret: string }) {
  const mod = useOpenModule();
  return mod ? <mod.OpenSend {...props} /> : <Loading />;
}

export function SendsPage() {
  const mod = useSendsModule();
  return mod ? <mod.Sends /> : <Loading />;
}
