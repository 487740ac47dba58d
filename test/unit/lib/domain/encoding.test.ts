/** Canonical base64 (lib/domain/encoding.ts): what decodes and re-encodes to itself, and nothing else. */
import { randomBytes } from "node:crypto";
import { base64Bytes, CANONICAL_BASE64, isCanonicalBase64 } from "../../../../lib/domain/encoding";

describe("canonical base64", () => {
  test("accepts exactly what decodes and re-encodes to itself", () => {
    for (let n = 0; n < 2000; n++) {
      const bytes = randomBytes(n % 50);
      const good = bytes.toString("base64");
      expect(CANONICAL_BASE64.test(good)).toBe(true);
      expect(base64Bytes(good)).toBe(bytes.length);
      // Mutate one character: the pattern agrees with Buffer's round trip.
      if (good.length > 0) {
        const i = n % good.length;
        const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ ";
        const mutated = good.slice(0, i) + alphabet[(n * 7) % alphabet.length] + good.slice(i + 1);
        const roundTrips = Buffer.from(mutated, "base64").toString("base64") === mutated;
        expect([mutated, CANONICAL_BASE64.test(mutated)]).toEqual([mutated, roundTrips]);
        // The check the server runs (by decoding) agrees with the pattern the OpenAPI document shows.
        expect([mutated, isCanonicalBase64(mutated)]).toEqual([mutated, roundTrips]);
      }
      expect(isCanonicalBase64(good)).toBe(true);
    }
    for (const bad of [
      "QR==",
      "QUI=x",
      "A",
      "AA",
      "AAA",
      "AA=A",
      "AAAA=",
      "A===",
      "AB==\n",
      "AB-_",
      "QQ",
      "QQ=",
      "QUJD\n",
      " QUJD",
      "QUJD====",
    ]) {
      expect(CANONICAL_BASE64.test(bad)).toBe(false);
      expect([bad, isCanonicalBase64(bad)]).toEqual([bad, false]);
    }
  });
});
