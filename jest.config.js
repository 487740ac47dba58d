/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.[tj]s$": ["ts-jest", { tsconfig: { allowJs: true, module: "commonjs", moduleResolution: "node10", isolatedModules: true, esModuleInterop: true, target: "es2022", ignoreDeprecations: "5.0" }, diagnostics: false }],
  },
  transformIgnorePatterns: ["/node_modules/(?!jose/)"],
};
