/**
 * What the single-process and split benchmarks (single.ts, split.ts) both set up on the product: a
 * user with 5 shared vaults, vaults filled with items of about 2 KiB, and a timed rekey of one.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { b64, encryptItem, newUserKeys, registrationBundle, signWrap, wrapShared, type UserKeys } from "../test/helpers/crypto";
import { call } from "./common";

export interface VaultUser {
  keys: UserKeys;
  bundle: ReturnType<typeof registrationBundle>;
  userId: string;
  token: string;
  /** The key of every vault the user creates here (each is shared, wrapped for the user alone). */
  vaultKey: Buffer;
  /** A POST /vaults body for such a vault, its name aside. */
  vaultBody: { type: string; encryptedVaultKey: string; wrapSignature: string };
  /** The user's first 5 vaults. */
  vaultIds: string[];
}

/** A new user registered and logged in on `url` (the API's base), with 5 shared vaults. */
export async function userWithVaults(url: string): Promise<VaultUser> {
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  const email = `bench-${randomUUID().slice(0, 8)}@example.test`;
  await call("POST", `${url}/auth/register`, undefined, { email, ...bundle });
  const login = await call("POST", `${url}/auth/login`, undefined, { email, authHash: bundle.authHash });
  const token: string = login.accessToken;
  const vaultKey = randomBytes(32);
  const wrapped = wrapShared(vaultKey, bundle.publicKey);
  const vaultBody = { type: "shared", encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys.edPrivate)) };
  const vaultIds: string[] = [];
  for (let i = 0; i < 5; i++) vaultIds.push((await call("POST", `${url}/vaults`, token, { ...vaultBody, name: `vault ${i}` })).vaultId);
  return { keys, bundle, userId: login.userId, token, vaultKey, vaultBody, vaultIds };
}

/** Another vault of `user`'s, named `name`; answers its id. */
export async function newVault(url: string, user: VaultUser, name: string): Promise<string> {
  return (await call("POST", `${url}/vaults`, user.token, { ...user.vaultBody, name })).vaultId;
}

/** About 2 KiB of ciphertext with IV and tag. */
const payload = () =>
  randomBytes(2048 - 28)
    .toString("hex")
    .slice(0, 2048 - 28);

/** An item of about 2 KiB for each of `ids` in `vaultId`, created 50 at a time. */
export async function fillVault(url: string, user: VaultUser, vaultId: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(
      ids
        .slice(i, i + 50)
        .map((id) =>
          call("POST", `${url}/vaults/${vaultId}/items`, user.token, encryptItem(user.vaultKey, vaultId, id, payload(), "site")),
        ),
    );
  }
}

/**
 * A body for the rekey of `vaultId` (its items `ids`) from key version `k`: a new key wrapped for
 * `user`, and each item under it at the revision it was read at, as the SDK sends it (each rekey
 * moves the vault one on: the k-th finds every item at revision k).
 */
export function rekeyBody(user: VaultUser, vaultId: string, ids: string[], k: number): string {
  const newWrap = wrapShared(randomBytes(32), user.bundle.publicKey);
  return JSON.stringify({
    newKeys: [{ userId: user.userId, encryptedVaultKey: b64(newWrap), wrapSignature: b64(signWrap(newWrap, user.keys.edPrivate)) }],
    items: ids.map((id) => ({ ...encryptItem(randomBytes(32), vaultId, id, payload(), "site"), revision: k })),
    keyVersion: k,
  });
}

/** POSTs the rekey `body` to `url`; answers the time to its answer, in ms. Fails, naming it `what`, unless 204. */
export async function timedRekey(url: string, token: string, body: string, what: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  });
  const ms = performance.now() - t0;
  if (res.status !== 204) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return ms;
}
