/**
 * Who sent a message, as Chromium tells the service worker (never as the message says). The popup
 * and the inline menu are this extension's own pages; a content script is the extension's code in
 * a web page's frame, whose page is not trusted. Each request kind is answered only to its part.
 */
import type { Request } from "../messages";

type Sender = chrome.runtime.MessageSender;

const ownPage = (sender: Sender, page: string): boolean =>
  sender.id === chrome.runtime.id && (sender.url ?? "").startsWith(chrome.runtime.getURL(page));

export const fromPopup = (sender: Sender) => ownPage(sender, "popup.html");
export const fromMenu = (sender: Sender) => ownPage(sender, "menu.html");

/** A content script: in a tab's frame, on an http(s) page. */
export const fromContentScript = (
  sender: Sender,
): sender is Sender & { tab: chrome.tabs.Tab & { id: number }; frameId: number; url: string } =>
  sender.id === chrome.runtime.id &&
  sender.tab?.id !== undefined &&
  sender.frameId !== undefined &&
  /^https?:\/\//.test(sender.url ?? "") &&
  !(sender.url ?? "").startsWith(chrome.runtime.getURL(""));

const POPUP: ReadonlySet<Request["kind"]> = new Set([
  "state",
  "login",
  "second-factor",
  "unlock",
  "lock",
  "logout",
  "search",
  "secret",
  "copied",
  "web-vault-url",
  // The account's own passkeys: a ceremony, and the PRF output it answers, go between the popup and the worker only.
  "account-passkey-sign-in",
  "account-passkey-answer",
  "account-passkey-password",
  "account-passkey-cancel",
  "account-passkeys",
  "account-passkey-add",
  "account-passkey-remove",
]);
const CONTENT: ReadonlySet<Request["kind"]> = new Set(["field-focus", "submitted", "pending-offer", "passkey-request", "passkey-wait"]);
/** The person's choices in a menu, an offer bar or a passkey prompt: each counts as their use of the vault (index.ts). */
export const MENU_CHOICES: ReadonlySet<Request["kind"]> = new Set([
  "menu-fill",
  "menu-generate",
  "offer-save",
  "offer-update",
  "offer-dismiss",
  "passkey-choose",
]);
const MENU: ReadonlySet<Request["kind"]> = new Set(["menu-data", ...MENU_CHOICES]);

/** Whether this sender may ask this kind of request. */
export function mayAsk(kind: Request["kind"], sender: Sender): boolean {
  // A copy from the popup or from a menu (a one-time code after a fill) both clear later.
  if (kind === "copied") return fromPopup(sender) || fromMenu(sender);
  if (POPUP.has(kind)) return fromPopup(sender);
  if (CONTENT.has(kind)) return fromContentScript(sender);
  if (MENU.has(kind)) return fromMenu(sender);
  return false;
}
