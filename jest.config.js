/**
 * The tests by kind, one jest project each (docs/developer/testing.md): `npm run test:unit` runs
 * `unit` alone (no database, no build, seconds); `npm test` runs every project.
 * @type {import('jest').Config}
 */
const KINDS = [
  "unit", // pure code: the domain's rules, the protocol's formats and vectors, the SDK's parts
  "contract", // the store port's contract on SQLite and PostgreSQL (MongoDB where MONGO_URL is set)
  "api", // the service over HTTP, route by route; its edges (hardening, bad input) as npm start runs it
  "adversary", // a dishonest server between real clients and the real service
  "clients", // vaultctl, the SDK and the web vault (Chromium) against the real service
  "cluster", // the split deployment over NATS, Redis and PostgreSQL, with faults
  "durability", // crashes, restarts, upgrades from an earlier release, backups
  "build", // the built server pack and its start
];

const shared = {
  testEnvironment: "<rootDir>/test/setup/environment.js",
  testMatch: ["**/*.test.ts"],
  // Every answer of the API a test receives is checked against the OpenAPI document.
  setupFilesAfterEnv: ["<rootDir>/test/setup/check-responses.ts"],
  // Dynamic imports name the compiled file (`./mongo/adapter.js`); under jest that is the .ts source.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: {
    // ts-jest transpiles our TypeScript, and the ESM-only jose and kysely, to CommonJS for jest.
    "^.+\\.[tj]s$": [
      "ts-jest",
      {
        tsconfig: {
          allowJs: true,
          module: "commonjs",
          moduleResolution: "node10",
          isolatedModules: true,
          esModuleInterop: true,
          target: "es2022",
          ignoreDeprecations: "5.0",
        },
        diagnostics: false,
      },
    ],
  },
  transformIgnorePatterns: ["/node_modules/(?!(jose|kysely)/)"],
};

// The MongoDB store suite needs a replica set; it runs wherever MONGO_URL is set (none can be
// installed on our machines). The summary reporter says so when it is left out.
const ignored = process.env.MONGO_URL ? ["/node_modules/"] : ["/node_modules/", "/test/contract/mongo\\.test\\.ts$"];

module.exports = {
  testTimeout: 60_000,
  // The run's temporary files in one folder, removed at the end (test/setup/run-dir.js).
  globalSetup: "<rootDir>/test/setup/run-dir.js",
  globalTeardown: "<rootDir>/test/setup/run-dir-teardown.js",
  reporters: ["default", "<rootDir>/test/plain-summary-reporter.js"],
  // The heaviest cluster test last: what it leaves behind weighed on the next test's timings.
  testSequencer: "<rootDir>/test/setup/sequencer.js",
  projects: KINDS.map((kind) => ({
    ...shared,
    displayName: kind,
    roots: [`<rootDir>/test/${kind}`],
    testPathIgnorePatterns: ignored,
  })),
};
