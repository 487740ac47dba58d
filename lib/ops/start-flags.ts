// The flags and environment the server's process is started with, wherever this project starts it.
// Design: docs/design/server-start.md
export const NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4", "--expose-gc"];
export const START_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: "131072" };
