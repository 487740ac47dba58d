/**
 * `BENCH_PARTS=account npm run bench`: what a person waits for at login and unlock through the SDK
 * (the code vaultctl runs), against the key derivation alone measured in the same run, alternated.
 * - login: a fresh client's prelogin, the KDF, the login request, opening the private keys, and
 *   every check the SDK makes on what the server answered;
 * - unlock: the KDF and opening the private keys of a client that is logged in.
 * The ratio to the bare KDF is the SDK's own cost around the derivation.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../lib/config";
import { median, timed } from "./common";
import { startNode } from "../app/node";
import { DEFAULT_ARGON2ID, MemoryPinStore, newKdfParams, VaultClient } from "../sdk";
import { deriveMasterKey } from "../protocol/crypto/primitives";

const ROUNDS = Number(process.env.BENCH_ACCOUNT_ROUNDS ?? 7);
const PASSWORD = "correct horse battery staple";

export async function accountFlows(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-account-"));
  const node = await startNode(loadConfig({ PORT: "0", LOG_LEVEL: "warn", DATA_DIR: dataDir }));
  const baseUrl = `http://127.0.0.1:${node.port}/api/v1`;
  try {
    console.log("## Login and unlock through the SDK (default KDF: Argon2id, 3 passes, 64 MiB, 4 lanes)");
    const email = "bench-account@example.test";
    const owner = new VaultClient({ baseUrl });
    await owner.register({ email, password: PASSWORD, orgName: "Bench" });
    const kdf = newKdfParams(DEFAULT_ARGON2ID);
    const kdfMs: number[] = [];
    const loginMs: number[] = [];
    const unlockMs: number[] = [];
    // One device (its pins) logging in again and again, as a person does.
    const pins = new MemoryPinStore();
    for (let i = 0; i < ROUNDS; i++) {
      kdfMs.push(await timed(() => deriveMasterKey(PASSWORD, kdf)));
      const client = new VaultClient({ baseUrl, pins });
      loginMs.push(await timed(() => client.login(email, PASSWORD)));
      client.lock();
      unlockMs.push(await timed(() => client.unlock(PASSWORD)));
      await client.logout();
    }
    const base = median(kdfMs);
    console.log(`the KDF alone (baseline), median of ${ROUNDS}: ${base.toFixed(0)} ms`);
    console.log(`login (fresh client), median: ${median(loginMs).toFixed(0)} ms; ratio ${(median(loginMs) / base).toFixed(2)}`);
    console.log(`unlock, median: ${median(unlockMs).toFixed(0)} ms; ratio ${(median(unlockMs) / base).toFixed(2)}\n`);
  } finally {
    await node.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
