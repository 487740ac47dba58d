/**
 * `BENCH_PARTS=password npm run bench`: a master password change for a user with
 * BENCH_PASSWORD_VAULTS personal vaults (200), through the SDK (the code vaultctl and the web vault
 * run) against a real server process, on SQLite and on PostgreSQL:
 * - the whole change: both derivations (current and new), every personal vault opened (its roster
 *   verified), its key wrapped again and its `rewrap` link signed, and the one request;
 * - the request alone (the server's transaction), and the server process's peak RSS above its
 *   resident size before the change (Linux: `clear_refs` resets the peak, `VmHWM` reads it);
 * against the floor no change can avoid, measured in the same run and alternated with it: the two
 * key derivations alone. Default KDF (Argon2id, 3 passes, 64 MiB, 4 lanes).
 */
import { DEFAULT_ARGON2ID, newKdfParams, VaultClient } from "../sdk";
import { deriveMasterKey } from "../protocol/crypto/primitives";
import { onBothStores, onServer } from "./account-change";

const VAULTS = Number(process.env.BENCH_PASSWORD_VAULTS ?? 200);
const ROUNDS = Number(process.env.BENCH_PASSWORD_ROUNDS ?? 3);
const PASSWORDS = ["correct horse battery staple", "purple monkey dishwasher 77"];

async function onStore(label: string, env: Record<string, string>): Promise<void> {
  await onServer(env, "/users/me/password", async (run) => {
    const client = new VaultClient({ baseUrl: run.url, fetch: run.timing });
    await client.register({ email: `bench-${Date.now()}@example.test`, password: PASSWORDS[0]!, orgName: "Bench" });
    for (let i = 0; i < VAULTS; i++) await client.vaults.create(`personal ${i}`, "personal");
    const m = await run.rounds(
      ROUNDS,
      async (round) => {
        const result = await client.changePassword(PASSWORDS[round % 2]!, PASSWORDS[(round + 1) % 2]!);
        if (result.vaults !== VAULTS) throw new Error(`re-wrapped ${result.vaults} vaults, not ${VAULTS}`);
      },
      async (round) => {
        await deriveMasterKey(PASSWORDS[round % 2]!, client.account.kdf);
        await deriveMasterKey(PASSWORDS[(round + 1) % 2]!, newKdfParams(DEFAULT_ARGON2ID));
      },
    );
    console.log(
      `${label}: the whole change for ${VAULTS} personal vaults, median of ${ROUNDS}: ${m.changeMs.toFixed(0)} ms ` +
        `(the two derivations alone: ${m.floorMs.toFixed(0)} ms; ratio ${(m.changeMs / m.floorMs).toFixed(2)}); ` +
        `the request alone: ${m.requestMs.toFixed(0)} ms; server peak RSS above its size before: ${m.peakMb} MB`,
    );
  });
}

export async function passwordChange(): Promise<void> {
  console.log(`## Master password change through the SDK (${VAULTS} personal vaults, default KDF)`);
  await onBothStores(onStore);
  console.log("");
}
