/**
 * Which relying party a page may speak for (sdk/passkeys/relying-party.ts), as browsers decide it:
 * a table of pages and the relying party ids they name, each allowed or refused by name.
 */
import { relyingPartyFor, PasskeyError } from "../../../../sdk/passkeys";

const ALLOWED: Array<[origin: string, rpId: string | undefined, result: string]> = [
  ["https://example.com", undefined, "example.com"],
  ["https://example.com", "example.com", "example.com"],
  ["https://login.example.com", "example.com", "example.com"],
  ["https://a.b.example.com:8443", "b.example.com", "b.example.com"],
  ["https://login.example.co.uk", "example.co.uk", "example.co.uk"],
  ["https://Login.Example.COM", "EXAMPLE.com", "example.com"], // hosts compare as URL parsing writes them
  ["https://alice.github.io", "alice.github.io", "alice.github.io"],
  ["http://localhost:3000", undefined, "localhost"],
  ["http://app.localhost", "app.localhost", "app.localhost"],
  ["https://bücher.example", undefined, "xn--bcher-kva.example"],
  ["https://example.com.", "example.com", "example.com"],
];

const REFUSED: Array<[origin: string, rpId: string | undefined, code: string]> = [
  ["http://example.com", undefined, "INSECURE_ORIGIN"], // not a secure context
  ["ftp://example.com", "example.com", "INSECURE_ORIGIN"],
  ["not an origin", undefined, "INSECURE_ORIGIN"],
  ["https://127.0.0.1", undefined, "NOT_A_DOMAIN"],
  ["https://[::1]", undefined, "NOT_A_DOMAIN"],
  ["https://example.com", "login.example.com", "RP_ID_MISMATCH"], // a parent may not claim its child
  ["https://evil-example.com", "example.com", "RP_ID_MISMATCH"], // a suffix, not at a label boundary
  ["https://example.com.evil.net", "example.com", "RP_ID_MISMATCH"], // a look-alike
  ["https://login.example.com", "com", "RP_ID_MISMATCH"], // a public suffix
  ["https://login.example.co.uk", "co.uk", "RP_ID_MISMATCH"],
  ["https://alice.github.io", "github.io", "RP_ID_MISMATCH"], // the private part of the list
  ["https://example.com", "", "RP_ID_MISMATCH"],
  ["https://example.com", "example.com/path", "RP_ID_MISMATCH"],
  ["https://a.example.com", "https://example.com", "RP_ID_MISMATCH"],
];

test.each(ALLOWED)("%s may speak for %s", (origin, rpId, result) => {
  expect(relyingPartyFor(origin, rpId)).toBe(result);
});

test.each(REFUSED)("%s naming %s is refused: %s", (origin, rpId, code) => {
  let err: unknown;
  try {
    relyingPartyFor(origin, rpId);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(PasskeyError);
  expect((err as PasskeyError).code).toBe(code);
});
