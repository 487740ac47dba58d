/**
 * The autofill rules the browser extension applies: which logins match a page (match.ts,
 * login-index.ts), whether a page imitates a known site (lookalike.ts), and whether to fill
 * (fill-rules.ts). Pure functions of what the content script measures: no DOM, no browser API.
 * Why each rule is what it is: docs/design/autofill-rules.md.
 */
export { parseItemUrl, parseWebUrl, preparedMatches, prepareItemUrl, registrableDomain, siteOf, urlMatches } from "./match";
export type { PreparedItemUrl, Site, WebUrl } from "./match";
export { lookalikeOf } from "./lookalike";
export { FILL_REFUSAL_TEXT, planFill } from "./fill-rules";
export type { FillInput, FillPlan, FillRefusal } from "./fill-rules";
export { fieldIsFillable, type FieldFacts } from "./fields";
export { LoginIndex } from "./login-index";
