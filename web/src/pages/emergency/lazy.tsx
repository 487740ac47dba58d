/** Where the emergency access page loads: fetched the first time it is shown, so that it is not part of the first page. */
import { lazyModule, Loading } from "../../lazy-module";

const useEmergencyModule = lazyModule(() => import("./index"));

export function EmergencyPage() {
  const mod = useEmergencyModule();
  return mod ? <mod.EmergencyPage /> : <Loading />;
}
