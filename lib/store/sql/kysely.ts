/**
 * Kysely's values, as the server uses them: from the build's one-file bundle when built (lib/vendor.ts),
 * from the package when run from the sources. Types come from "kysely" itself, with `import type`.
 */
import type * as K from "kysely";
import type * as KM from "kysely/migration";
import { vendored } from "../../vendor";

/* eslint-disable @typescript-eslint/no-require-imports */
const lib = vendored<Omit<typeof K, "Migrator"> & Pick<typeof KM, "Migrator">>("kysely", () => ({
  ...(require("kysely") as typeof K),
  Migrator: (require("kysely/migration") as typeof KM).Migrator,
}));
/* eslint-enable @typescript-eslint/no-require-imports */

export const sql: typeof K.sql = lib.sql;
export const Kysely: typeof K.Kysely = lib.Kysely;
export type Kysely<DB> = K.Kysely<DB>;
export const Migrator: typeof KM.Migrator = lib.Migrator;
export type Migrator = KM.Migrator;
export const PostgresDialect: typeof K.PostgresDialect = lib.PostgresDialect;
export const PostgresAdapter: typeof K.PostgresAdapter = lib.PostgresAdapter;
export const SqliteDialect: typeof K.SqliteDialect = lib.SqliteDialect;
export const SqliteAdapter: typeof K.SqliteAdapter = lib.SqliteAdapter;
