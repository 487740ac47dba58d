/**
 * The one decision an autofill client takes before it fills a login into a page: fill, with the
 * website that matched, or a named refusal that the extension shows in its menu. The content
 * script measures the facts (the frame's and the top page's addresses, the gesture, each field's
 * box and style); the rules live here, in one place, with a test for each.
 *
 * The first rule that fails names the refusal, in this order: the addresses are web pages; the
 * frame is still the one the menu was opened for; the login belongs to this site (its websites,
 * then http against https, then look-alikes); the frame's page is of the same site; a field can
 * be seen; the user asked.
 */
import type { ItemUrl } from "../item-types";
import { lookalikeOf } from "./lookalike";
import { parseItemUrl, parseWebUrl, preparedMatches, prepareItemUrl, type WebUrl } from "./match";

export type FillRefusal =
  | "NOT_A_WEB_PAGE"
  | "FRAME_MISMATCH"
  | "NO_MATCH"
  | "NEVER_MATCH"
  | "INSECURE_PAGE"
  | "LOOKALIKE"
  | "OTHER_SITE_FRAME"
  | "NO_VISIBLE_FIELD"
  | "NO_GESTURE";

/** What the extension's menu says for each refusal. */
export const FILL_REFUSAL_TEXT: Readonly<Record<FillRefusal, string>> = {
  NOT_A_WEB_PAGE: "This is not a web page: logins are filled only into http and https pages.",
  FRAME_MISMATCH: "The form went to another address after the menu opened: nothing was filled.",
  NO_MATCH: "This login is not saved for this website.",
  NEVER_MATCH: "This login's website is set never to match, so it is not filled here.",
  INSECURE_PAGE: "This page is not secure (http): a login saved for https is never filled here.",
  LOOKALIKE: "This website looks like one of your saved websites but is not it: it may be a fake, and nothing is filled.",
  OTHER_SITE_FRAME: "This login form is inside another website's page: it is filled only on its own site.",
  NO_VISIBLE_FIELD: "There is no visible field to fill on this page.",
  NO_GESTURE: "Choose the login in the menu (a click or Enter) to fill it.",
};

export interface FillInput {
  /** The login's websites (`itemUrls(content)`). */
  itemUrls: ItemUrl[];
  /** The address of the frame that holds the fields. */
  frameUrl: string;
  /** The address of the tab's top page. */
  topUrl: string;
  /** True only when the fill follows the user's own click or key press on the extension's menu. */
  gesture: boolean;
  /** How many of the form's fields `fieldIsFillable` accepts. */
  visibleFields: number;
  /** Registrable domains the user has logins for (`LoginIndex.domains()`), to name a look-alike; the item's own are always counted. */
  knownDomains?: Iterable<string>;
  /** The frame's address when the menu listing this login was shown: a fill into a frame that has since gone to another origin is refused. */
  menuUrl?: string;
}

export type FillPlan =
  | { fill: true; matchedUrl: ItemUrl }
  | { fill: false; refusal: FillRefusal; /** With LOOKALIKE: the known domain the page imitates. */ imitates?: string };

const refuse = (refusal: FillRefusal): FillPlan => ({ fill: false, refusal });

/** Whether this login belongs in `frame`: the website that matches it, or why none does. */
function siteRule(input: FillInput, frame: WebUrl, top: WebUrl): { matchedUrl: ItemUrl } | FillPlan {
  const urls = (Array.isArray(input.itemUrls) ? input.itemUrls : []).filter((u) => u !== null && typeof u === "object");
  let insecure = false;
  let never = false;
  for (const url of urls) {
    if (url.match === "never") {
      // Said of this site, `never` is the reason, not a missing website.
      never ||= parseItemUrl(url.url)?.domain === frame.domain;
      continue;
    }
    const website = prepareItemUrl(url);
    if (website === undefined || !preparedMatches(website, frame)) continue;
    // A login kept for https goes to no page that an attacker on the network can rewrite: not the
    // frame, nor the page around it.
    if (website.url.scheme === "https" && (frame.scheme === "http" || top.scheme === "http")) insecure = true;
    else return { matchedUrl: url };
  }
  if (insecure) return refuse("INSECURE_PAGE");
  if (never) return refuse("NEVER_MATCH");
  const own = urls.flatMap((u) => parseItemUrl(u.url)?.domain ?? []);
  const imitates = lookalikeOf(frame.host, [...(input.knownDomains ?? []), ...own]);
  return imitates === undefined ? refuse("NO_MATCH") : { fill: false, refusal: "LOOKALIKE", imitates };
}

function origin(url: WebUrl): string {
  return `${url.scheme}://${url.hostPort}`;
}

/** Whether to fill a login into a frame now, and with which of its websites; see the header for the order of the rules. */
export function planFill(input: FillInput): FillPlan {
  const frame = parseWebUrl(input.frameUrl);
  const top = parseWebUrl(input.topUrl);
  if (frame === undefined || top === undefined) return refuse("NOT_A_WEB_PAGE");
  if (input.menuUrl !== undefined) {
    const shown = parseWebUrl(input.menuUrl);
    if (shown === undefined || origin(shown) !== origin(frame)) return refuse("FRAME_MISMATCH");
  }
  const site = siteRule(input, frame, top);
  if ("fill" in site) return site;
  // A login frame that another site embeds could be overlaid and clicked through by that site.
  if (top.domain !== frame.domain) return refuse("OTHER_SITE_FRAME");
  if (!(input.visibleFields > 0)) return refuse("NO_VISIBLE_FIELD");
  if (input.gesture !== true) return refuse("NO_GESTURE");
  return { fill: true, matchedUrl: site.matchedUrl };
}
