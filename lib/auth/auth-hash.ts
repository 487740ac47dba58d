/**
 * The server never sees the master password: clients send a 32-byte `authHash` derived from it.
 * The server stores only a salted scrypt hash of that and compares in constant time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import os from "node:os";
import { FifoGate } from "../limits/fifo-gate";

const KEY_LEN = 32;

/**
 * Hashes at once at most one per core, the rest in the order they came: each holds 16 MiB for its
 * length, and more at once than cores would only share the cores and hold more memory. Never more
 * than libuv's pool less one (UV_THREADPOOL_SIZE, 4 by default), where scrypt runs: a thread stays
 * free for the file system and DNS work that shares the pool.
 */
const hashing = new FifoGate(Math.max(1, Math.min(os.availableParallelism(), libuvThreads() - 1)));

/** libuv's pool as Node sizes it: UV_THREADPOOL_SIZE when it is a number from 1 to 1024, else 4. */
function libuvThreads(): number {
  const n = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? "", 10);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 1024) : 4;
}

function scryptAsync(secret: Buffer, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return hashing.run(
    () => new Promise((resolve, reject) => scrypt(secret, salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key)))),
  );
}

function options(cost: number): ScryptOptions {
  return { N: cost, r: 8, p: 1, maxmem: 256 * cost * 8 + 1024 * 1024 };
}

/** `scrypt$N$r$p$salt$hash`: the parameters travel with the hash, so the cost can be raised later. */
export async function hashAuthHash(authHash: Buffer, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(authHash, salt, options(cost));
  return `scrypt$${cost}$8$1$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function authHashMatches(authHash: Buffer, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !key) return false;
  const expected = Buffer.from(key, "base64");
  const actual = await scryptAsync(authHash, Buffer.from(salt, "base64"), { ...options(Number(n)), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
