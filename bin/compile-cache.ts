/**
 * Imported first by the entry points: Node keeps the compiled code of every module it loads on
 * disk (under the system's temporary folder) and reuses it at the next start, so a node that is
 * restarted after a crash serves again sooner. A no-op where the Node version lacks it.
 */
import nodeModule from "node:module";

nodeModule.enableCompileCache?.();
