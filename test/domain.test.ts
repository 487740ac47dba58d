/** The contract's rules as plain functions, called without a broker. */
import { randomBytes } from "node:crypto";
import { isUuid } from "../lib/domain/ids";
import { base64Bytes, CANONICAL_BASE64 } from "../lib/domain/encoding";
import { parseDuration } from "../lib/domain/duration";
import { normalizeEmail } from "../lib/domain/email";
import { isSingleScript } from "../sdk/email";
import { checkKeyBundle, checkWrap } from "../lib/domain/keys";
import { assertExactItemSet, assertExactMemberSet, assertKeyVersion } from "../lib/domain/rekey";
import { assertMayRemoveMember, assertOwnerRemains, mayDo, type VaultAction } from "../lib/domain/vault-roles";
import { isRedeemable } from "../lib/domain/invites";
import { decideOrgName, decideVaultName } from "../lib/domain/names";
import { Errors } from "moleculer";
import { bodyError, toHttpError, AppError } from "../lib/errors";
import { b64, newUserKeys, registrationBundle, signWrap, wrapPersonal, wrapShared } from "./helpers/crypto";

const code = (fn: () => void) => {
  try {
    fn();
    return "ok";
  } catch (err) {
    return (err as AppError).type;
  }
};

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
      }
    }
    for (const bad of ["QR==", "QUI=x", "A", "AA", "AAA", "AA=A", "AAAA=", "A===", "AB==\n"])
      expect(CANONICAL_BASE64.test(bad)).toBe(false);
  });

  test("UUIDs", () => {
    expect(isUuid("0e3f4a1c-2b5d-4c6e-8f70-123456789abc")).toBe(true);
    expect(isUuid("0e3f4a1c2b5d4c6e8f70123456789abc")).toBe(false);
    expect(isUuid("../etc/passwd")).toBe(false);
  });
});

describe("durations and emails", () => {
  test("expiresIn is <positive integer><s|m|h|d>", () => {
    expect(parseDuration("24h")).toBe(86_400_000);
    expect(parseDuration("1s")).toBe(1000);
    expect(parseDuration("30d")).toBe(30 * 86_400_000);
    for (const bad of ["0h", "-1h", "1.5h", "h", "24", "24H", "1w", " 1h", "01h"]) expect(parseDuration(bad)).toBeNull();
  });

  test("emails are trimmed and lower-cased; whitespace or control characters inside are refused", () => {
    expect(normalizeEmail("  Ann@Example.ORG ")).toBe("ann@example.org");
    for (const bad of ["a b@x.org", "a\u0000b@x.org", "a@b", "@x.org", "a@@x.org", "a@x..org", "", "a\tb@x.org"]) {
      expect([bad, code(() => normalizeEmail(bad))]).toEqual([bad, "INVALID"]);
    }
  });

  test("emails: NFKC, then one script per part; format characters refused", () => {
    expect(normalizeEmail("\uff21nn@Example.org")).toBe("ann@example.org");
    expect(isSingleScript("paypal")).toBe(true);
    expect(isSingleScript("\u0440aypal")).toBe(false);
    expect(isSingleScript("\u5c71\u7530\u30bf\u30ed\u30a6taro")).toBe(true);
    expect(isSingleScript("\u03b1\u0430")).toBe(false);
    expect(code(() => normalizeEmail("a\u00adb@example.org"))).toBe("INVALID");
  });
});

describe("vault roles", () => {
  test("the permission table of contract section 3", () => {
    const table = {
      rename: [true, true, false],
      addMember: [true, true, false],
      changeRole: [true, false, false],
      rekey: [true, true, false],
      delete: [true, false, false],
      read: [true, true, true],
      adoptRoster: [true, false, false],
    } satisfies Record<VaultAction, readonly [boolean, boolean, boolean]>;
    for (const [action, allowed] of Object.entries(table)) {
      expect((["owner", "admin", "member"] as const).map((r) => mayDo(r, action as keyof typeof table))).toEqual(allowed);
    }
  });

  test("who may remove whom", () => {
    expect(code(() => assertMayRemoveMember("admin", "member", false))).toBe("ok");
    expect(code(() => assertMayRemoveMember("admin", "admin", false))).toBe("FORBIDDEN");
    expect(code(() => assertMayRemoveMember("admin", "owner", false))).toBe("FORBIDDEN");
    expect(code(() => assertMayRemoveMember("member", "member", false))).toBe("FORBIDDEN");
    expect(code(() => assertMayRemoveMember("member", "member", true))).toBe("ok");
    expect(code(() => assertMayRemoveMember("owner", "owner", false))).toBe("ok");
  });

  test("an owner always remains", () => {
    expect(code(() => assertOwnerRemains(1, "owner", null))).toBe("INVALID");
    expect(code(() => assertOwnerRemains(1, "owner", "admin"))).toBe("INVALID");
    expect(code(() => assertOwnerRemains(2, "owner", null))).toBe("ok");
    expect(code(() => assertOwnerRemains(1, "member", null))).toBe("ok");
    expect(code(() => assertOwnerRemains(1, "owner", "owner"))).toBe("ok");
  });
});

describe("rekey sets", () => {
  test("exactly the current members and items: none missing, none extra, no duplicates", () => {
    expect(code(() => assertExactMemberSet(["a", "b"], ["b", "a"]))).toBe("ok");
    expect(code(() => assertExactMemberSet(["a", "b"], ["a"]))).toBe("INVALID");
    expect(code(() => assertExactMemberSet(["a", "b"], ["a", "b", "c"]))).toBe("INVALID");
    expect(code(() => assertExactMemberSet(["a", "b"], ["a", "a"]))).toBe("INVALID");
    expect(code(() => assertExactItemSet([], []))).toBe("ok");
    expect(code(() => assertExactItemSet(["x"], ["x", "x"]))).toBe("INVALID");
    expect(code(() => assertKeyVersion(2, undefined))).toBe("ok");
    expect(code(() => assertKeyVersion(2, 1))).toBe("CONFLICT");
  });
});

describe("keys and wraps", () => {
  test("a bundle holds together, and wraps are checked for size and signature", async () => {
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    expect(code(() => checkKeyBundle(bundle))).toBe("ok");
    const vaultKey = randomBytes(32);
    const rsa = wrapShared(vaultKey, bundle.publicKey);
    const kw = wrapPersonal(vaultKey, keys.stretchedKey);
    const base = { holderPublicKey: bundle.publicKey, senderSigningPublicKey: bundle.signingPublicKey };
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(rsa), wrapSignature: b64(signWrap(rsa, keys.edPrivate)) }),
      ),
    ).toBe("ok");
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "personal", encryptedVaultKey: b64(kw), wrapSignature: b64(signWrap(kw, keys.edPrivate)) }),
      ),
    ).toBe("ok");
    expect(
      code(() => checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(kw), wrapSignature: b64(signWrap(kw, keys.edPrivate)) })),
    ).toBe("INVALID");
    expect(
      code(() =>
        checkWrap({ ...base, vaultType: "shared", encryptedVaultKey: b64(rsa), wrapSignature: b64(signWrap(kw, keys.edPrivate)) }),
      ),
    ).toBe("INVALID");
  });
});

describe("invites and errors", () => {
  test("only a pending, unexpired invite is redeemable", () => {
    const now = new Date().toISOString();
    const later = new Date(Date.now() + 1000).toISOString();
    expect(isRedeemable({ status: "pending", expiresAt: later }, now)).toBe(true);
    expect(isRedeemable({ status: "pending", expiresAt: now }, now)).toBe(false);
    expect(isRedeemable({ status: "used", expiresAt: later }, now)).toBe(false);
    expect(isRedeemable({ status: "revoked", expiresAt: later }, now)).toBe(false);
  });

  test("any error maps to the contract's body; internals never leave a 5xx", () => {
    expect(toHttpError(new AppError("CONFLICT", "taken", { field: "email" }))).toEqual({
      status: 409,
      body: { error: { code: "CONFLICT", message: "taken", field: "email" } },
      retryAfterSec: undefined,
    });
    const internal = toHttpError(new Error("SQLITE_CORRUPT: at /var/lib/secret/path"));
    expect(internal).toEqual({ status: 500, body: { error: { code: "INTERNAL", message: "Internal server error" } } });
    const validation = toHttpError({ type: "VALIDATION_ERROR", data: [{ field: "newKeys[3].wrapSignature", message: "bad" }] });
    expect(validation.body.error).toEqual({ code: "INVALID", message: "bad", field: "wrapSignature" });
    const tooLarge = bodyError({ type: "entity.too.large", status: 413 });
    expect(toHttpError(tooLarge).body.error.code).toBe("PAYLOAD_TOO_LARGE");
    const badJson = bodyError({ type: "entity.parse.failed", body: '{"authHash": "secret"' });
    expect(toHttpError(badJson)).toEqual({
      status: 400,
      body: { error: { code: "INVALID", message: "Request body is not valid JSON" } },
      retryAfterSec: undefined,
    });
    expect(JSON.stringify(badJson)).not.toContain("secret");
    expect(toHttpError({ code: 11000, message: "duplicate key" }).status).toBe(500);
  });

  test("a node or NATS away is 503 UNAVAILABLE, whichever of Moleculer's errors says it, with no internals", () => {
    const away = [
      new Errors.ServiceNotAvailableError({ action: "items.create", nodeID: "node-1" }),
      new Errors.ServiceNotFoundError({ action: "items.create", nodeID: "node-1" }),
      new Errors.RequestRejectedError({ action: "items.create", nodeID: "node-1" }),
      new Errors.RequestTimeoutError({ action: "items.create", nodeID: "node-1" }),
    ];
    for (const err of away)
      expect(toHttpError(err)).toEqual({
        status: 503,
        body: { error: { code: "UNAVAILABLE", message: "Service temporarily unavailable" } },
      });
  });
});

describe("names (decideVaultName, decideOrgName; the rule: sdk/names.ts)", () => {
  const outcome = (decide: () => string) => {
    try {
      return decide();
    } catch (err) {
      return `${(err as AppError).type} ${(err as AppError).data.field}: ${(err as AppError).message}`;
    }
  };
  test.each([
    ["a name", "Team", "Team"],
    ["kept as given, spaces and all", " Team ", " Team "],
    ["blank", "   ", "INVALID name: name must not be blank"],
    ["empty", "", "INVALID name: name must not be blank"],
    ["too long", "x".repeat(257), "INVALID name: name must be 1 to 256 characters"],
    ["the longest", "x".repeat(256), "x".repeat(256)],
  ])("a vault's name: %s", (_what, raw, expected) => {
    expect(outcome(() => decideVaultName(raw))).toBe(expected);
  });
  test.each([
    ["trimmed", "  Acme  ", "Acme"],
    ["none given: the default", undefined, "My organization"],
    ["blank", "  ", "INVALID orgName: orgName must not be blank"],
  ])("an organization's name: %s", (_what, raw, expected) => {
    expect(outcome(() => decideOrgName(raw))).toBe(expected);
  });
});
