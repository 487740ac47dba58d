/**
 * The inline menus: which frame each one was opened for, what it lists, and the fill it asks for.
 *
 * A content script reports a focused field; the service worker answers a random token and keeps,
 * beside it, the frame as Chromium names it (tab, frame, document, URL, origin). The menu page,
 * drawn inside a closed shadow root the page cannot reach, asks by token. A fill goes to that one
 * document only (`documentId`), after `planFill` (sdk/autofill) passed on the frame's and the
 * tab's addresses read now, and the content script checks its origin once more before it fills.
 */
import { generatePassword, itemUrls, type Item } from "../../../sdk";
import { FILL_REFUSAL_TEXT, lookalikeOf, planFill, siteOf } from "../../../sdk/autofill";
import { totpCode } from "../../../sdk/totp";
import type { FieldKind, FillAnswer, FillField, FillOrder, MenuData } from "../messages";
import type { Entry, OpenedItems } from "./opened-items";
import { isSignedIn, isUnlocked, onLock, opened } from "./vault";

/** A frame a menu or an offer bar was opened for. */
export interface Frame {
  tabId: number;
  frameId: number;
  documentId?: string;
  url: string;
  origin: string;
  fieldKind: FieldKind;
  /** The origins of the frames around it, innermost first, as its content script read them (they can only refuse more). */
  ancestors?: string[];
  at: number;
  /** Set for an offer bar. */
  offerId?: string;
  /** Set for a passkey prompt (background/passkeys.ts). */
  passkeyId?: string;
}

const MENU_LIFETIME_MS = 10 * 60_000;
/** At most this many menus are remembered; the oldest go first (a page that focuses fields in a loop fills nothing up). */
const MAX_FRAMES = 200;
const frames = new Map<string, Frame>();
/** Per tab: the login just filled that has a one-time code, offered on the next code field. */
const codeFor = new Map<number, { key: string; at: number }>();

export function register(frame: Omit<Frame, "at">): string {
  const token = [...globalThis.crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
  for (const [t, f] of frames)
    if (Date.now() - f.at > MENU_LIFETIME_MS || frames.size >= MAX_FRAMES) frames.delete(t);
    else break;
  frames.set(token, { ...frame, at: Date.now() });
  return token;
}

// Locked or signed out, no menu, offer or code of before is answered.
onLock(() => {
  frames.clear();
  prepared.clear();
  codeFor.clear();
});

export function frameOf(token: string): Frame | undefined {
  const frame = frames.get(token);
  return frame && Date.now() - frame.at <= MENU_LIFETIME_MS ? frame : undefined;
}

export const forget = (token: string) => frames.delete(token);

/** What a focus worked out for its menu, handed to the menu page when it asks a moment later, instead of working it out again. */
const prepared = new Map<string, { data: MenuData; at: number }>();
const PREPARED_MS = 3000;

/**
 * The page around the frame that a login must share its site with: the first frame around it of
 * another site, else the tab's top page, read now. A login form framed by another site anywhere
 * in the chain is then refused as `OTHER_SITE_FRAME`.
 */
async function outerUrlOf(frame: Frame): Promise<string> {
  const domain = siteOf(frame.url)?.domain;
  const foreign = frame.ancestors?.find((origin) => siteOf(origin)?.domain !== domain);
  return foreign ?? (await chrome.tabs.get(frame.tabId)).url ?? "";
}

/**
 * Why nothing for this page would be filled, as the menu says it, before anything is listed: not a
 * web page, a look-alike of a saved site (named), an http page, another site's frame.
 */
function pageRefusal(items: OpenedItems, frame: Frame, topUrl: string, entries: Entry[]): string | undefined {
  if (!siteOf(frame.url)) return FILL_REFUSAL_TEXT.NOT_A_WEB_PAGE;
  if (entries.length === 0) {
    const host = new URL(frame.url).hostname;
    const imitated = lookalikeOf(host, items.loginDomains());
    return imitated ? `${FILL_REFUSAL_TEXT.LOOKALIKE} (${host} is not ${imitated})` : undefined;
  }
  const plans = entries.map((e) => planFill({ itemUrls: e.urls, frameUrl: frame.url, topUrl, gesture: true, visibleFields: 1 }));
  const refused = plans.find((p) => !p.fill);
  return plans.some((p) => p.fill) || !refused || refused.fill ? undefined : FILL_REFUSAL_TEXT[refused.refusal];
}

export async function menuData(token: string): Promise<MenuData> {
  const ready = prepared.get(token);
  prepared.delete(token);
  if (ready && Date.now() - ready.at < PREPARED_MS) return ready.data;
  return freshMenuData(token);
}

async function freshMenuData(token: string): Promise<MenuData> {
  const frame = frameOf(token);
  if (!frame) return { mode: "gone" };
  if (!(await isUnlocked())) return { mode: "locked" };
  const items = await opened();
  await items.ready();
  const site = siteOf(frame.url)?.host ?? "";
  if (frame.fieldKind === "card" || frame.fieldKind === "identity")
    return { mode: "fill", fieldKind: frame.fieldKind, site, entries: items.ofType(frame.fieldKind).map(summary) };
  const topUrl = await outerUrlOf(frame);
  const matching = items.loginsFor(frame.url);
  const refusal = pageRefusal(items, frame, topUrl, matching);
  const listed = frame.fieldKind === "code" ? withCode(items, frame, matching) : matching;
  return {
    mode: "fill",
    fieldKind: frame.fieldKind,
    site,
    entries: refusal ? [] : listed.map(summary),
    ...(refusal && { refusal }),
  };
}

/** For a one-time code field: the login filled last in this tab first, then the page's logins that have a code. */
function withCode(items: OpenedItems, frame: Frame, matching: Entry[]): Entry[] {
  const last = codeFor.get(frame.tabId);
  const recent = last && Date.now() - last.at < 5 * 60_000 ? items.summary(last.key) : undefined;
  const rest = matching.filter((e) => e.hasTotp && e.key !== recent?.key);
  return recent && matching.some((e) => e.key === recent.key) ? [recent, ...rest] : rest;
}

const summary = ({ urls: _urls, ...s }: Entry) => s;

/** What a fill of this item puts where, for the field kind the menu was opened on. */
function fieldsOf(item: Item, kind: FieldKind): Partial<Record<FillField, string>> {
  const f = item.fields;
  if (kind === "code") return item.totp ? { code: totpCode(item.totp).code } : {};
  if (kind === "card") return { cardholder: f.cardholder, cardNumber: f.number, cardExpiry: f.expiry, cardCode: f.code };
  if (kind === "identity") return { fullName: f.fullName, email: f.email, phone: f.phone, address: f.address };
  return { username: f.username ?? f.email, password: f.password };
}

const TYPE_FOR: Record<FieldKind, string> = { login: "login", "new-password": "login", code: "login", card: "card", identity: "identity" };

/**
 * Why this item may not be filled into this frame, as a sentence; undefined when it may. A login
 * passes `planFill`; a card or an identity, which belong to no site, only an https page in an
 * https tab. Either way only an item of the kind the menu was opened for.
 */
async function refusalOf(frame: Frame, item: Item, items: OpenedItems): Promise<string | undefined> {
  if (item.type !== TYPE_FOR[frame.fieldKind]) return "That item is not for this field.";
  if (frame.fieldKind === "card" || frame.fieldKind === "identity") {
    const around = [await outerUrlOf(frame), ...(frame.ancestors ?? [])];
    const secure = [frame.url, ...around].every((url) => siteOf(url)?.scheme === "https");
    return secure ? undefined : FILL_REFUSAL_TEXT.INSECURE_PAGE;
  }
  const plan = planFill({
    itemUrls: itemUrls(item),
    frameUrl: frame.url,
    topUrl: await outerUrlOf(frame),
    gesture: true,
    visibleFields: 1,
    knownDomains: items.loginDomains(),
  });
  return plan.fill ? undefined : FILL_REFUSAL_TEXT[plan.refusal];
}

/** A fill the user chose in a menu: checked, then sent to the one document the menu was opened in. */
export async function fill(
  token: string,
  key: string,
  via: FillOrder["via"] = "menu",
): Promise<{ filled: number; code?: string } | { refused: string }> {
  const frame = frameOf(token);
  if (!frame) return { refused: "This menu has expired: click the field again." };
  const items = await opened();
  const item = items.item(key);
  if (!item) return { refused: "That item is no longer in your vaults." };
  const refused = await refusalOf(frame, item, items);
  if (refused) return { refused };
  const hasCode = frame.fieldKind === "login" && Boolean(item.totp);
  const answer = await send(frame, {
    kind: "fill",
    via,
    origin: frame.origin,
    fields: fieldsOf(item, frame.fieldKind),
    ...(hasCode && via === "menu" && { lingerMs: 4000 }),
  });
  if ("refused" in answer) return { refused: CONTENT_REFUSALS[answer.refused] };
  if (hasCode && item.totp) {
    codeFor.set(frame.tabId, { key, at: Date.now() });
    return { filled: answer.filled, code: totpCode(item.totp).code };
  }
  return { filled: answer.filled };
}

/** A generated password into the new-password fields the menu was opened on; the save offer follows the form's submit. */
export async function fillGenerated(token: string): Promise<{ filled: number } | { refused: string }> {
  const frame = frameOf(token);
  if (!frame) return { refused: "This menu has expired: click the field again." };
  if (!siteOf(frame.url)) return { refused: FILL_REFUSAL_TEXT.NOT_A_WEB_PAGE };
  const answer = await send(frame, { kind: "fill", via: "menu", origin: frame.origin, fields: { newPassword: generatePassword(20) } });
  return "refused" in answer ? { refused: CONTENT_REFUSALS[answer.refused] } : answer;
}

const CONTENT_REFUSALS: Record<Extract<FillAnswer, { refused: string }>["refused"], string> = {
  ORIGIN_CHANGED: "The page changed to another site before the fill: nothing was filled.",
  MENU_COVERED: "Something on the page covered this menu, so nothing was filled: the page may be trying to trick you into a click.",
  NO_VISIBLE_FIELD: FILL_REFUSAL_TEXT.NO_VISIBLE_FIELD,
  NO_MENU: "This menu is no longer on the page: click the field again.",
};

/** The one document a frame's menu was opened in (Chromium's documentId), so a message never reaches a page that replaced it. */
const documentOf = (frame: Frame) => (frame.documentId ? { documentId: frame.documentId } : { frameId: frame.frameId });

async function send(frame: Frame, order: FillOrder): Promise<FillAnswer> {
  try {
    return (await chrome.tabs.sendMessage(frame.tabId, order, documentOf(frame))) as FillAnswer;
  } catch {
    // The document is gone (navigated, closed): the fill goes nowhere else.
    return { refused: "ORIGIN_CHANGED" };
  }
}

/** The keyboard shortcut: the first login matching the frame last focused in the active tab, if the rules allow. */
export async function fillByShortcut(tabId: number): Promise<void> {
  const last = [...frames.entries()].filter(([, f]) => f.tabId === tabId && !f.offerId && f.fieldKind === "login").pop();
  if (!last || !(await isUnlocked())) return;
  const [token, frame] = last;
  const items = await opened();
  await items.ready();
  const first = items.loginsFor(frame.url)[0];
  if (first) await fill(token, first.key, "shortcut");
}

/**
 * Every menu is drawn this many rows tall, whatever it lists: its size, which the page can
 * measure, says nothing of whether the vault is locked, how many cards it holds, or whether this
 * page looks like a site it has a login for. The list scrolls inside.
 */
export const MENU_ROWS = 4;

/** Focus reports answered per tab and second; more (a page focusing fields in a loop) get no menu. */
const FOCUS_RATE = 10;
const focusTimes = new Map<number, number[]>();

function tooFast(tabId: number): boolean {
  const recent = (focusTimes.get(tabId) ?? []).filter((at) => Date.now() - at < 1000);
  recent.push(Date.now());
  focusTimes.set(tabId, recent);
  return recent.length > FOCUS_RATE;
}

/** A field was focused: a token for its menu, and its rows (none: no menu is drawn). */
export async function focused(frame: Omit<Frame, "at">): Promise<{ token?: string; rows: number }> {
  // Signed out, the extension stays out of every page: the popup is where to sign in.
  if (tooFast(frame.tabId) || !(await isSignedIn())) return { rows: 0 };
  const token = register(frame);
  const data = await freshMenuData(token).catch(() => ({ mode: "gone" }) as const);
  if (data.mode === "gone") {
    forget(token);
    return { rows: 0 };
  }
  for (const [t, p] of prepared) if (Date.now() - p.at >= PREPARED_MS) prepared.delete(t);
  prepared.set(token, { data, at: Date.now() });
  return { token, rows: MENU_ROWS };
}

/** Tells a frame's content script to take its menu or offer bar away. */
export async function closeIn(frame: Frame, overlay: "menu" | "offer"): Promise<void> {
  await chrome.tabs.sendMessage(frame.tabId, { kind: "close", overlay }, documentOf(frame)).catch(() => undefined);
}
