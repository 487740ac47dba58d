/** Emails (lib/domain/email.ts, with the SDK's one-script rule, protocol/email.ts): normalized, or refused `INVALID`. */
import { normalizeEmail } from "../../../../lib/domain/email";
import { isSingleScript } from "../../../../protocol/email";
import { code } from "../../../helpers/refusal";

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
});
