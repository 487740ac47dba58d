/**
 * Imported by the built server's entry point after the compile cache and before anything that
 * requires moleculer: moleculer loads from its bundle, one file, where the package and its
 * dependencies are about 200 (lib/vendor.ts `moleculerFromBundle`; BENCHMARKS.md).
 */
import { moleculerFromBundle } from "../lib/vendor";

moleculerFromBundle();
