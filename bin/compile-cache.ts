/**
 * Imported first by the entry points: Node keeps the compiled code of every module it loads on
 * disk (under the system's temporary folder, or NODE_COMPILE_CACHE) and reuses it at the next
 * start, so a node that is restarted after a crash serves again sooner. A no-op where the Node
 * version lacks it.
 */
import nodeModule from "node:module";

nodeModule.enableCompileCache?.();

/**
 * Writes what was compiled so far to the cache now. Node writes it only when the process exits
 * normally: a node that was killed, or crashed, before its first clean stop would leave none, and
 * its restart would compile everything again. Called once the node serves (bin/server-main.ts).
 */
export function keepCompiledCode(): void {
  nodeModule.flushCompileCache?.();
}
