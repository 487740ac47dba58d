/** Emails (lib/domain/email.ts, with the SDK's one-script rule, protocol/email.ts): normalized, or refused `INVALID`. */
import { normalizeEmail } from "../../../../lib/domain/email";
import { badEmail } from "../../../../lib/domain/refusals";
import { EmailError, isSingleScript, normalizeEmail as protocolNormalize } from "../../../../protocol/email";
import { asRefusal, code, outcomeOf } from "../../../helpers/refusal";

/** The words protocol/email.ts refuses an address with. */
function why(raw: string): string {
  try {
    protocolNormalize(raw);
  } catch (err) {
    if (err instanceof EmailError) return err.message;
  }
  throw new Error(`${raw} is an address protocol/email.ts accepts`);
}

describe("emails", () => {
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

  test("a refused address is badEmail, in the protocol's words, naming the field asked for", () => {
    expect(outcomeOf(() => normalizeEmail("a@b"))).toEqual(asRefusal(badEmail(why("a@b"), "email")));
    expect(outcomeOf(() => normalizeEmail("a b@x.org", "inviteEmail"))).toEqual(asRefusal(badEmail(why("a b@x.org"), "inviteEmail")));
  });
});
