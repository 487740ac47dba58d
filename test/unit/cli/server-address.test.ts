/** `vaultctl --server` (and VAULT_SERVER) as people type it: the web vault's address or the API's. */
import { apiBase } from "../../../cli/context";

test.each([
  ["http://host:3000", "http://host:3000/api/v1"],
  ["http://host:3000/", "http://host:3000/api/v1"],
  ["http://host:3000/api/v1", "http://host:3000/api/v1"],
  ["http://host:3000/api/v1/", "http://host:3000/api/v1"],
  ["https://example.com/vault", "https://example.com/vault/api/v1"],
  ["  https://example.com  ", "https://example.com/api/v1"],
])("%s is the API at %s", (typed, base) => {
  expect(apiBase(typed)).toBe(base);
});
