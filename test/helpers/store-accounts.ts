/** Accounts made straight in a store (no server), for the store contract's parts. */
import { newId, type OrgId, type UserId } from "../../lib/domain/ids";
import type { Store } from "../../lib/store/port";
import { newUserKeys, registrationBundle } from "./crypto";

/** A new user, owner of a new organization of their own, with real keys. */
export async function ownOrg(store: Store): Promise<{ userId: UserId; orgId: OrgId }> {
  const at = new Date().toISOString();
  const user = {
    ...registrationBundle(await newUserKeys()),
    userId: newId<UserId>(),
    email: `${newId()}@example.test`,
    authHash: "scrypt$stored",
    createdAt: at,
  };
  const org = { orgId: newId<OrgId>(), name: "Own", createdAt: at };
  const rec = await store.accounts.registerOwnerOfNewOrg({ user, org, onlyIfFirstUser: false });
  return { userId: rec.userId, orgId: rec.orgId };
}
