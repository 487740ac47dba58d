// ESLint: the recommended rules of ESLint and typescript-eslint (as the Moleculer TypeScript
// template starts from), formatting left to Prettier, and the project's one layering rule.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";

/** Where the product's source lives: the size rules below cover each (test/unit/structure.test.ts checks it). */
export const SOURCE_FOLDERS = [
  "app",
  "bench",
  "bin",
  "build",
  "cli",
  "deploy",
  "extension",
  "lib",
  "mixins",
  "protocol",
  "sdk",
  "services",
  "web/src",
];

const composition = {
  group: ["**/services", "**/services/*", "**/app/*", "**/bin/*", "**/mixins/*", "**/cli/*"],
  message: "lib/, sdk/ and the clients never import services, the composition root, entry points, mixins or the CLI.",
};
const serverCode = {
  group: ["**/lib", "**/lib/*", "**/lib/**"],
  message: "protocol/, sdk/ and the clients never import the server's lib/: the rules both sides need live in protocol/.",
};
const clientCode = {
  group: ["**/sdk", "**/sdk/*", "**/sdk/**", "**/cli/**", "**/web/**", "**/extension/**"],
  message: "The server and the protocol core never import a client: what both sides need lives in protocol/.",
};
const nodeOnly = { group: ["node:*"], message: "protocol/ and sdk/ run in browsers too: WebCrypto and standard APIs only." };

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "web/dist/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: "module" },
    rules: {
      // `_name` marks a parameter a signature needs and the body does not.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // One direction of imports: lib/ is what services are built from, never the other way round.
    files: ["lib/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [composition, clientCode] }] },
  },
  {
    // The server stands on the shared protocol core, never on a client.
    files: ["services/**/*.ts", "mixins/**/*.ts", "app/**/*.ts", "moleculer.config.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [clientCode] }] },
  },
  {
    // The protocol core is what server and clients share: no I/O, no server code, no client code.
    files: ["protocol/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [composition, serverCode, clientCode, nodeOnly] }] },
  },
  {
    // Kysely, jose and moleculer-web reach the server through lib/vendor.ts (lib/store/sql/kysely.ts,
    // lib/auth/jose.ts, the gateway mixin): the built server loads each as one bundled file.
    files: ["lib/**/*.ts", "services/**/*.ts", "mixins/**/*.ts", "bin/**/*.ts", "app/**/*.ts", "moleculer.config.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        ...["kysely", "kysely/migration", "jose", "moleculer-web"].map((name) => ({
          name,
          allowTypeImports: true,
          message:
            "Take its values through lib/vendor.ts (lib/store/sql/kysely.ts, lib/auth/jose.ts, or vendored() as the gateway mixin does): the built server loads it as one bundled file.",
        })),
      ],
    },
  },
  {
    // The SDK runs in browsers too, and is what clients are built on: WebCrypto, none of the server's code.
    files: ["sdk/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [composition, serverCode, nodeOnly] }] },
  },
  {
    // Clients (vaultctl, the web vault, the browser extension) use the SDK's rules, never the server's.
    files: ["cli/**/*.ts", "web/**/*.{ts,tsx}", "extension/**/*.{ts,tsx}"],
    rules: { "no-restricted-imports": ["error", { patterns: [composition, serverCode] }] },
  },
  {
    // Files a reader can hold and functions a reader can follow, counted without blank lines and
    // comments (so deleting a blank line buys nothing), in every source folder. Tests are left
    // out: a test file is a table of cases, and each describe() is one function.
    files: [...SOURCE_FOLDERS.map((dir) => `${dir}/**/*.{ts,tsx,mjs}`), "moleculer.config.ts"],
    rules: {
      "max-lines": ["error", { max: 400, skipBlankLines: true, skipComments: true }],
      "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // A service is the thin layer between the broker and the rules: parse, one decision, the store, events.
    files: ["services/**/*.ts"],
    rules: { "max-lines": ["error", { max: 250, skipBlankLines: true, skipComments: true }] },
  },
  {
    // A migration is one schema step, read top to bottom: cut into functions it would hide the step.
    files: ["lib/store/sql/migrations/*.ts"],
    rules: { "max-lines-per-function": "off" },
  },
  {
    // Tests read response bodies as the JSON they are; production code may not.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["**/*.js", "**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { module: "writable", require: "readonly", process: "readonly", __dirname: "readonly", console: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  {
    files: ["web/**/*.{ts,tsx}"],
    languageOptions: { globals: { window: "readonly", document: "readonly", navigator: "readonly" } },
  },
);
