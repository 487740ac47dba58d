/**
 * The decision before any fill (sdk/autofill/fill-rules.ts): a login is filled into a frame only
 * when every rule holds, and each refusal is named, with the sentence the extension's menu shows.
 * And which fields count as ones the user can see.
 */
import { FILL_REFUSAL_TEXT, fieldIsFillable, planFill, type FillInput, type FillRefusal } from "../../../../sdk/autofill";
import type { ItemUrl } from "../../../../sdk/item-types";

const ACME: ItemUrl = { url: "https://acme-bank.com", match: "domain" };

/** A fill that every rule allows: a user's click on a visible form of the login's own site. */
const ALLOWED: FillInput = {
  itemUrls: [ACME],
  frameUrl: "https://login.acme-bank.com/signin",
  topUrl: "https://www.acme-bank.com/",
  gesture: true,
  visibleFields: 2,
};

test("a login's own site, a visible form, the user's click: filled with the website that matched", () => {
  expect(planFill(ALLOWED)).toEqual({ fill: true, matchedUrl: ACME });
});

test.each<[string, Partial<FillInput>, ItemUrl]>([
  [
    "an http login into an https page",
    { itemUrls: [{ url: "http://acme-bank.com", match: "domain" }] },
    { url: "http://acme-bank.com", match: "domain" },
  ],
  [
    "an http login into an http page",
    {
      itemUrls: [{ url: "http://intranet.acme.com:8080", match: "host" }],
      frameUrl: "http://intranet.acme.com:8080/",
      topUrl: "http://intranet.acme.com:8080/",
    },
    { url: "http://intranet.acme.com:8080", match: "host" },
  ],
  [
    "the first website that matches, past one set to never for another site",
    { itemUrls: [{ url: "https://old.example", match: "never" }, { url: "https://other.example", match: "domain" }, ACME] },
    ACME,
  ],
  ["a frame of the same site as its page", { frameUrl: "https://sso.acme-bank.com/frame", topUrl: "https://acme-bank.com/" }, ACME],
  [
    "localhost with its port",
    { itemUrls: [{ url: "localhost:8080", match: "host" }], frameUrl: "https://localhost:8080/", topUrl: "https://localhost:8080/" },
    { url: "localhost:8080", match: "host" },
  ],
])("filled: %s", (_why, change, matched) => {
  expect(planFill({ ...ALLOWED, ...change })).toEqual({ fill: true, matchedUrl: matched });
});

test.each<[FillRefusal, string, Partial<FillInput>]>([
  ["NOT_A_WEB_PAGE", "a frame that is a data: page", { frameUrl: "data:text/html,<form><input type=password></form>" }],
  ["NOT_A_WEB_PAGE", "a frame of an extension", { frameUrl: "chrome-extension://abcdefghijklmnop/login.html" }],
  ["NOT_A_WEB_PAGE", "a local file", { frameUrl: "file:///home/me/acme-bank.html", topUrl: "file:///home/me/acme-bank.html" }],
  ["NOT_A_WEB_PAGE", "a malformed frame address", { frameUrl: "https://" }],
  ["NOT_A_WEB_PAGE", "a top page that is not a web page", { topUrl: "about:blank#acme-bank.com" }],
  [
    "FRAME_MISMATCH",
    "a frame gone to another site since the menu opened",
    { menuUrl: "https://login.acme-bank.com/signin", frameUrl: "https://evil.net/" },
  ],
  [
    "FRAME_MISMATCH",
    "a frame gone to another host of the same site",
    { menuUrl: "https://login.acme-bank.com/signin", frameUrl: "https://www.acme-bank.com/signin" },
  ],
  [
    "FRAME_MISMATCH",
    "a frame gone from https to http",
    { menuUrl: "https://login.acme-bank.com/signin", frameUrl: "http://login.acme-bank.com/signin" },
  ],
  ["NO_MATCH", "another site", { frameUrl: "https://example.org/login", topUrl: "https://example.org/" }],
  ["NO_MATCH", "a login with no website", { itemUrls: [] }],
  ["NO_MATCH", "a login whose only website is a javascript: address", { itemUrls: [{ url: "javascript:alert(1)", match: "domain" }] }],
  [
    "NO_MATCH",
    "a login whose only website is a data: address",
    { itemUrls: [{ url: "data:text/html,acme-bank.com", match: "startsWith" }] },
  ],
  ["NO_MATCH", "a host website on another host of its site", { itemUrls: [{ url: "https://acme-bank.com", match: "host" }] }],
  [
    "NO_MATCH",
    "another site under the same private suffix",
    {
      itemUrls: [{ url: "https://alice.github.io", match: "domain" }],
      frameUrl: "https://mallory.github.io/",
      topUrl: "https://mallory.github.io/",
    },
  ],
  ["NEVER_MATCH", "a website set to never, of this site", { itemUrls: [{ url: "https://acme-bank.com", match: "never" }] }],
  [
    "INSECURE_PAGE",
    "an https login into an http frame of an https page",
    { frameUrl: "http://login.acme-bank.com/signin", topUrl: "https://www.acme-bank.com/" },
  ],
  ["INSECURE_PAGE", "an https login into an https frame of an http page", { topUrl: "http://www.acme-bank.com/" }],
  [
    "LOOKALIKE",
    "the known domain as leading labels",
    { frameUrl: "https://acme-bank.com.evil.net/", topUrl: "https://acme-bank.com.evil.net/" },
  ],
  ["LOOKALIKE", "a Greek alpha (acme-bαnk.com)", { frameUrl: "https://xn--acme-bnk-j9f.com/", topUrl: "https://xn--acme-bnk-j9f.com/" }],
  ["LOOKALIKE", "one letter off", { frameUrl: "https://acme-bamk.com/", topUrl: "https://acme-bamk.com/" }],
  ["OTHER_SITE_FRAME", "the login's own frame, embedded by another site", { topUrl: "https://evil.net/" }],
  [
    "OTHER_SITE_FRAME",
    "embedded by another site under the same private suffix",
    {
      itemUrls: [{ url: "https://alice.github.io", match: "domain" }],
      frameUrl: "https://alice.github.io/",
      topUrl: "https://mallory.github.io/",
    },
  ],
  ["NO_VISIBLE_FIELD", "no field the user can see", { visibleFields: 0 }],
  ["NO_VISIBLE_FIELD", "a field count that is not a number", { visibleFields: Number.NaN }],
  ["NO_GESTURE", "no click or key press of the user", { gesture: false }],
])("%s: %s", (refusal, _why, change) => {
  const plan = planFill({ ...ALLOWED, ...change });
  expect(plan).toMatchObject({ fill: false, refusal });
  expect(FILL_REFUSAL_TEXT[refusal]).toMatch(/^[A-Z].{20,}\.$/);
});

test("a look-alike of a site the user knows from other logins is named", () => {
  const plan = planFill({
    ...ALLOWED,
    itemUrls: [{ url: "https://example.org", match: "domain" }],
    frameUrl: "https://paypa1.com/",
    topUrl: "https://paypa1.com/",
    knownDomains: ["paypal.com"],
  });
  expect(plan).toEqual({ fill: false, refusal: "LOOKALIKE", imitates: "paypal.com" });
});

test("the menu's address of the same origin allows the fill", () => {
  expect(planFill({ ...ALLOWED, menuUrl: "https://login.acme-bank.com/other#x" })).toEqual({ fill: true, matchedUrl: ACME });
});

test("every refusal has its own sentence", () => {
  const texts = Object.values(FILL_REFUSAL_TEXT);
  expect(new Set(texts).size).toBe(texts.length);
  expect(FILL_REFUSAL_TEXT.INSECURE_PAGE).toBe("This page is not secure (http): a login saved for https is never filled here.");
});

/** A password field a person sees and can type into. */
const FIELD = {
  type: "password",
  width: 240,
  height: 32,
  display: "inline-block",
  visibility: "visible",
  opacity: 1,
  disabled: false,
  readOnly: false,
};

test.each<[string, Partial<Parameters<typeof fieldIsFillable>[0]>]>([
  ["a password field", {}],
  ["a text field", { type: "text" }],
  ["an email field", { type: "email" }],
  ["a field of no declared type", { type: "" }],
  ["a field in capitals", { type: "PASSWORD" }],
  ["a one-time code field", { type: "tel", width: 60 }],
  ["a faint field", { opacity: 0.1 }],
  ["a field in view and unclipped", { inViewport: true, clipped: false }],
])("fillable: %s", (_why, change) => {
  expect(fieldIsFillable({ ...FIELD, ...change })).toBe(true);
});

test.each<[string, Partial<Parameters<typeof fieldIsFillable>[0]>]>([
  ["a hidden input", { type: "hidden" }],
  ["a checkbox", { type: "checkbox" }],
  ["a submit button", { type: "submit" }],
  ["a file picker", { type: "file" }],
  ["zero width", { width: 0 }],
  ["zero height", { height: 0 }],
  ["one pixel square", { width: 1, height: 1 }],
  ["a width that is not a number", { width: Number.NaN }],
  ["display: none", { display: "none" }],
  ["visibility: hidden", { visibility: "hidden" }],
  ["visibility: collapse", { visibility: "collapse" }],
  ["opacity 0", { opacity: 0 }],
  ["opacity just under 0.1", { opacity: 0.09 }],
  ["disabled", { disabled: true }],
  ["read-only", { readOnly: true }],
  ["clipped out of sight", { clipped: true }],
  ["placed off the page", { inViewport: false }],
])("not fillable: %s", (_why, change) => {
  expect(fieldIsFillable({ ...FIELD, ...change })).toBe(false);
});
