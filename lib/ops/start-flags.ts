/**
 * How the server's process is started wherever this project starts it (README "Memory"): `npm
 * start`, the Dockerfile and the Kubernetes manifests (which write them out, a test holds them to
 * this), the local cluster script and the benchmarks (which use these).
 *
 * - `--max-semi-space-size=4`: V8's young generation at most 2 × 4 MiB instead of growing to
 *   2 × 16 MiB, which the start alone fills once and the process then keeps: about 12 MiB less
 *   idle and 80 MiB less peak RSS under load; the same GET throughput, and POST rounds that could
 *   not tell a difference from the noise (BENCHMARKS.md).
 * - `MALLOC_MMAP_THRESHOLD_=131072`: glibc serves blocks above 128 KiB straight from the system and
 *   gives them back when freed. Without it, after the first such block glibc raises the threshold
 *   and keeps later ones in its arenas: a login's 16 MiB scrypt stays resident after the login.
 */
export const NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4"];
export const START_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: "131072" };
