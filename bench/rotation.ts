/**
 * `BENCH_PARTS=rotation npm run bench` (issue 28): a key rotation for a user who is a member of
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
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { VaultClient } from "../sdk";
import {
  generateEd25519KeyPair,
  generateRsaKeyPair,
  importRsaPrivateKey,
  randomBytes,
  rsaOaepUnwrap,
  rsaOaepWrap,
} from "../sdk/primitives";
import { createTestDatabase } from "../test/helpers/postgres";
import { spawnServer } from "../test/helpers/process";
import { TEST_KDF } from "../test/helpers/sdk";
import { PIN } from "./common";

const VAULTS = Number(process.env.BENCH_ROTATION_VAULTS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROTATION_ROUNDS ?? 3);
const PASSWORD = "correct horse battery staple";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (kb: number) => (kb / 1024).toFixed(1);

function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

/** What any rotation must compute: new keys, and every vault key out of one RSA key and into another. */
async function cryptoFloor(): Promise<void> {
  const [oldRsa, newRsa] = await Promise.all([generateRsaKeyPair(3072), generateRsaKeyPair(3072), generateEd25519KeyPair()]);
  const oldPrivate = await importRsaPrivateKey(oldRsa.privateKeyPkcs8);
  for (let i = 0; i < VAULTS; i++)
    await rsaOaepWrap(newRsa.publicKeyDer, await rsaOaepUnwrap(oldPrivate, await rsaOaepWrap(oldRsa.publicKeyDer, randomBytes(32))));
}

async function onStore(label: string, env: Record<string, string>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-rotation-"));
  const server = await spawnServer(
    { DATA_DIR: dataDir, REGISTRATION_MODE: "open", ...env },
    { script: path.join(__dirname, "../bin/server.js"), prefix: PIN.server },
  );
  const pid = server.child.pid!;
  try {
    let requestMs = 0;
    const timing: typeof fetch = async (input, init) => {
      if (!String(input).endsWith("/users/me/keys")) return fetch(input, init);
      const t0 = performance.now();
      const res = await fetch(input, init);
      await res.clone().arrayBuffer();
      requestMs = performance.now() - t0;
      return res;
    };
    const tag = Date.now();
    const ada = new VaultClient({ baseUrl: server.url });
    await ada.register({ email: `ada-${tag}@example.test`, password: PASSWORD, orgName: "Bench", kdf: TEST_KDF });
    const invite = await ada.createInvite(`bob-${tag}@example.test`, "member");
    const bob = new VaultClient({ baseUrl: server.url, fetch: timing });
    await bob.register({ email: `bob-${tag}@example.test`, password: PASSWORD, kdf: TEST_KDF, invite: invite.code });
    for (let i = 0; i < VAULTS; i++) {
      const vault = await ada.createVault(`shared ${i}`);
      await ada.share(vault.vaultId, bob.account.userId);
    }
    const floorMs: number[] = [];
    const rotationMs: number[] = [];
    const serverMs: number[] = [];
    const peakKb: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const floor = async () => {
        const t0 = performance.now();
        await cryptoFloor();
        floorMs.push(performance.now() - t0);
      };
      const rotation = async () => {
        const before = statusKb(pid, "VmRSS");
        fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
        const t0 = performance.now();
        const result = await bob.rotateKeys();
        rotationMs.push(performance.now() - t0);
        if (result.vaults !== VAULTS) throw new Error(`wrapped ${result.vaults} vaults, not ${VAULTS}`);
        serverMs.push(requestMs);
        peakKb.push(statusKb(pid, "VmHWM") - before);
      };
      // Alternated: the floor first in even rounds, the rotation first in odd ones.
      if (round % 2 === 0) {
        await floor();
        await rotation();
      } else {
        await rotation();
        await floor();
      }
    }
    const floor = median(floorMs);
    console.log(
      `${label}: the whole rotation for a member of ${VAULTS} shared vaults, median of ${ROUNDS}: ${median(rotationMs).toFixed(0)} ms ` +
        `(new keys and ${VAULTS} RSA unwraps and wraps alone: ${floor.toFixed(0)} ms; ratio ${(median(rotationMs) / floor).toFixed(2)}); ` +
        `the request alone: ${median(serverMs).toFixed(0)} ms; server peak RSS above its size before: ${mb(median(peakKb))} MB`,
    );
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function keyRotation(): Promise<void> {
  console.log(`## Key rotation through the SDK (a member of ${VAULTS} shared vaults)`);
  await onStore("SQLite", {});
  const database = await createTestDatabase();
  try {
    await onStore("PostgreSQL", { DATABASE_URL: database.url });
  } finally {
    await database.drop();
  }
  console.log("");
}
