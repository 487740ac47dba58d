/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  // The MongoDB store suite needs a replica set; it runs wherever MONGO_URL is set (none can be
  // installed on our machines). The summary reporter says so when it is left out.
  testPathIgnorePatterns: process.env.MONGO_URL ? ["/node_modules/"] : ["/node_modules/", "/test/store\\.mongo\\.test\\.ts$"],
  testTimeout: 60_000,
  // Every answer of the API a test receives is checked against the OpenAPI document.
  setupFilesAfterEnv: ["<rootDir>/test/setup/check-responses.ts"],
  // The run's temporary files in one folder, removed at the end (test/setup/run-dir.js).
  globalSetup: "<rootDir>/test/setup/run-dir.js",
  globalTeardown: "<rootDir>/test/setup/run-dir-teardown.js",
  // Dynamic imports name the compiled file (`./mongo/adapter.js`); under jest that is the .ts source.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  reporters: ["default", "<rootDir>/test/plain-summary-reporter.js"],
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
