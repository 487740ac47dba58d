/**
 * What the tests need beside the SDK's own calls: a vault made, and shared, the way a plain
 * interface client (or a release before signed rosters) does it, with a user's real keys but no
 * roster link.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { fromBase64, toBase64, type Bytes } from "../../protocol/encoding";
import { openAccountKeys, type KdfChoice } from "../../protocol/crypto/keys";
import { aesKwWrap, ed25519Sign, randomBytes, rsaOaepWrap } from "../../protocol/crypto/primitives";

/** The fastest derivation the SDK accepts (its PBKDF2 floor, about 0.1 s), for suites that log in often. */
export const TEST_KDF: KdfChoice = { algorithm: "pbkdf2-sha256", iterations: 600_000 };

/** A vault with a new key wrapped (and signed) for `client`'s user through the plain interface: no `create` link, no roster. */
export async function unsignedVault(
  client: VaultClient,
  name: string,
  type: "personal" | "shared" = "shared",
): Promise<{ vaultId: string; vaultKey: Bytes }> {
  const keys = await openAccountKeys(client.exportStretchedKey(), client.account);
  const vaultKey = randomBytes(32);
  const wrapped = type === "personal" ? await aesKwWrap(keys.stretchedKey, vaultKey) : await rsaOaepWrap(keys.publicKeyDer, vaultKey);
  const vault = await client.http.request<{ vaultId: string }>("POST", "/vaults", {
    body: { name, type, encryptedVaultKey: toBase64(wrapped), wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)) },
  });
  return { vaultId: vault.vaultId, vaultKey };
}

/** Shares a vault without a roster through the plain interface: the key wrapped for the recipient's registered key, signed by `client`'s user. */
export async function plainShare(
  client: VaultClient,
  vault: { vaultId: string; vaultKey: Bytes },
  recipientUserId: string,
  role: "admin" | "member" = "member",
): Promise<void> {
  const keys = await openAccountKeys(client.exportStretchedKey(), client.account);
  const recipient = await client.http.request<{ publicKey: string }>("GET", `/users/${recipientUserId}/keys`);
  const wrapped = await rsaOaepWrap(fromBase64(recipient.publicKey), vault.vaultKey);
  await client.http.request("POST", `/vaults/${vault.vaultId}/members`, {
    body: {
      recipientUserId,
      role,
      encryptedVaultKey: toBase64(wrapped),
      wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
    },
  });
}

/** The password of every user `ownerAndAdmin` registers. */
export const SDK_PASSWORD = "correct horse battery staple";

/**
 * Two real SDK clients of the server at `url`: alice, owner of a new organization (her pins and
 * seen heads in `pins` and `heads`, for clients of hers made later), and carol, an admin she
 * invited; each with a unique email.
 */
export async function ownerAndAdmin(
  url: string,
  pins: MemoryPinStore = new MemoryPinStore(),
  heads: MemoryRosterHeadStore = new MemoryRosterHeadStore(),
): Promise<{ alice: VaultClient; carol: VaultClient }> {
  const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;
  const alice = new VaultClient({ baseUrl: url, pins, rosterHeads: heads });
  await alice.register({ email: email("alice"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  const address = email("carol");
  const { code } = await alice.invites.create(address, "admin");
  const carol = new VaultClient({ baseUrl: url });
  await carol.register({ email: address, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
  return { alice, carol };
}
