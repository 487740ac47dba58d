/** A client device's own memory, in memory: what a fresh browser profile or a fresh vaultctl home starts with. */
import { MemoryPinStore, MemoryRosterHeadStore, MemoryValues, type InviteSecret, type KnownVault, type RememberedKdf } from "../../sdk";

export function newDevice() {
  return {
    pins: new MemoryPinStore(),
    rosterHeads: new MemoryRosterHeadStore(),
    kdfMemory: new MemoryValues<RememberedKdf>(),
    inviteSecrets: new MemoryValues<InviteSecret>(),
    knownVaults: new MemoryValues<Record<string, KnownVault>>(),
  };
}
