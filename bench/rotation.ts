/**
 * `BENCH_PARTS=rotation npm run bench`: a key rotation for a user who is a member of
 * BENCH_ROTATION_VAULTS shared vaults (200), each made and shared with them by a colleague, through
 * the SDK (the code vaultctl and the web vault run) against a real server process, on SQLite and on
 * PostgreSQL:
 * - the whole rotation: new RSA-3072 and Ed25519 keys, the key log read and its step signed, every
 *   vault opened (its roster verified, its key unwrapped with the old key) and wrapped to the new
 *   key with its `rotate` link signed, and the one request;
 * - the request alone (the server's transaction), and the server process's peak RSS above its
 *   resident size before the rotation (Linux: `clear_refs` resets the peak, `VmHWM` reads it);
 * against the floor no rotation can avoid, measured in the same run and alternated with it: the new
 * keys generated, and each vault key unwrapped with an RSA-3072 key and wrapped to another.
 */
import { VaultClient } from "../sdk";
import {
  generateEd25519KeyPair,
  generateRsaKeyPair,
  importRsaPrivateKey,
  randomBytes,
  rsaOaepUnwrap,
  rsaOaepWrap,
} from "../protocol/crypto/primitives";
import { TEST_KDF } from "../test/helpers/sdk";
import { onBothStores, onServer } from "./account-change";

const VAULTS = Number(process.env.BENCH_ROTATION_VAULTS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROTATION_ROUNDS ?? 3);
const PASSWORD = "correct horse battery staple";

/** What any rotation must compute: new keys, and every vault key out of one RSA key and into another. */
async function cryptoFloor(): Promise<void> {
  const [oldRsa, newRsa] = await Promise.all([generateRsaKeyPair(3072), generateRsaKeyPair(3072), generateEd25519KeyPair()]);
  const oldPrivate = await importRsaPrivateKey(oldRsa.privateKeyPkcs8);
  for (let i = 0; i < VAULTS; i++)
    await rsaOaepWrap(newRsa.publicKeyDer, await rsaOaepUnwrap(oldPrivate, await rsaOaepWrap(oldRsa.publicKeyDer, randomBytes(32))));
}

async function onStore(label: string, env: Record<string, string>): Promise<void> {
  await onServer(env, "/users/me/keys", async (run) => {
    const tag = Date.now();
    const ada = new VaultClient({ baseUrl: run.url });
    await ada.register({ email: `ada-${tag}@example.test`, password: PASSWORD, orgName: "Bench", kdf: TEST_KDF });
    const invite = await ada.invites.create(`bob-${tag}@example.test`, "member");
    const bob = new VaultClient({ baseUrl: run.url, fetch: run.timing });
    await bob.register({ email: `bob-${tag}@example.test`, password: PASSWORD, kdf: TEST_KDF, invite: invite.code });
    for (let i = 0; i < VAULTS; i++) {
      const vault = await ada.vaults.create(`shared ${i}`);
      await ada.members.share(vault.vaultId, bob.account.userId);
    }
    const m = await run.rounds(
      ROUNDS,
      async () => {
        const result = await bob.keys.rotate();
        if (result.vaults !== VAULTS) throw new Error(`wrapped ${result.vaults} vaults, not ${VAULTS}`);
      },
      cryptoFloor,
    );
    console.log(
      `${label}: the whole rotation for a member of ${VAULTS} shared vaults, median of ${ROUNDS}: ${m.changeMs.toFixed(0)} ms ` +
        `(new keys and ${VAULTS} RSA unwraps and wraps alone: ${m.floorMs.toFixed(0)} ms; ratio ${(m.changeMs / m.floorMs).toFixed(2)}); ` +
        `the request alone: ${m.requestMs.toFixed(0)} ms; server peak RSS above its size before: ${m.peakMb} MB`,
    );
  });
}

export async function keyRotation(): Promise<void> {
  console.log(`## Key rotation through the SDK (a member of ${VAULTS} shared vaults)`);
  await onBothStores(onStore);
  console.log("");
}
