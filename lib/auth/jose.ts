/**
 * jose's values, as the server uses them: from the build's one-file bundle when built (lib/vendor.ts),
 * from the package when run from the sources. Types come from "jose" itself, with `import type`.
 */
import type * as J from "jose";
import { vendored } from "../vendor";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const lib = vendored<typeof J>("jose", () => require("jose") as typeof J);

export const SignJWT: typeof J.SignJWT = lib.SignJWT;
export type SignJWT = J.SignJWT;
export const jwtVerify: typeof J.jwtVerify = lib.jwtVerify;
export const decodeProtectedHeader: typeof J.decodeProtectedHeader = lib.decodeProtectedHeader;
