/**
 * Argon2id from hash-wasm (WebAssembly), in a module of its own so that it is loaded only where a
 * key is derived: `deriveMasterKey` imports it when first called, and a page that derives in a Web
 * Worker (the web vault) never loads it on the page itself.
 */
export { argon2id } from "hash-wasm";
