/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  testTimeout: 60_000,
  reporters: ["default", "<rootDir>/test/plain-summary-reporter.js"],
  transform: {
    // ts-jest transpiles our TypeScript, and the ESM-only jose and kysely, to CommonJS for jest.
    "^.+\\.[tj]s$": ["ts-jest", {
      tsconfig: { allowJs: true, module: "commonjs", moduleResolution: "node10", isolatedModules: true, esModuleInterop: true, target: "es2022", ignoreDeprecations: "5.0" },
      diagnostics: false,
    }],
  },
  transformIgnorePatterns: ["/node_modules/(?!(jose|kysely)/)"],
};
