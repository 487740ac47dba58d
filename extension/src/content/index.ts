/**
 * The content script, in every frame of every http(s) page. It holds no key and no item: it
 * reports a focused field and a sent login form to the service worker, draws the inline menu and
 * the offer bar as the extension's own page in a frame inside a closed shadow root (the page can
 * neither read nor restyle what they show), and puts a fill's values into the visible fields of
 * its own document when the service worker orders it, after checking its origin is still the
 * one the fill is for and, for a menu's fill, that nothing on the page covers the menu.
 */
import type { FieldKind, FillAnswer, FillOrder } from "../messages";
import { inputsOf, isNewPassword, kindOf, put, targetsOf, usernameFor } from "./fields";
import { Overlay } from "./overlay";

const menu = new Overlay("menu");
const bar = new Overlay("offer");
let focusedField: HTMLInputElement | undefined;
/** Set while a fill puts its values in: the focus it moves is not the person's. */
let filling = false;

async function ask<T>(request: object): Promise<T | undefined> {
  try {
    return (await chrome.runtime.sendMessage(request)) as T;
  } catch {
    return undefined; // the extension was reloaded or removed: this page's script is an orphan
  }
}

document.addEventListener(
  "focusin",
  (event) => {
    const kind = kindOf(event.target);
    if (!kind || !event.isTrusted || filling) return;
    const field = event.target as HTMLInputElement;
    if (field === focusedField && menu.shown) return;
    focusedField = field;
    void openMenu(field, kind);
  },
  true,
);

// A click on the focused field brings its menu back (after Escape, or a field the page focused before this script ran).
document.addEventListener(
  "click",
  (event) => {
    const kind = kindOf(event.target);
    if (!kind || !event.isTrusted || menu.shown) return;
    focusedField = event.target as HTMLInputElement;
    void openMenu(focusedField, kind);
  },
  true,
);

/** The field whose menu is being asked for: a focus and a click on it in one gesture ask once. */
let opening: HTMLInputElement | undefined;

async function openMenu(field: HTMLInputElement, kind: FieldKind): Promise<void> {
  if (opening === field) return;
  opening = field;
  try {
    const answer = await ask<{ token?: string; rows?: number }>({ kind: "field-focus", fieldKind: kind });
    if (!answer?.token || !answer.rows || focusedField !== field) return menu.close();
    menu.open(answer.token, field, answer.rows);
  } finally {
    if (opening === field) opening = undefined;
  }
}

// The menu closes on the person's Escape and on their click elsewhere in the page (never on the page's own events).
document.addEventListener("keydown", (event) => event.isTrusted && event.key === "Escape" && menu.close(), true);
document.addEventListener("mousedown", (event) => event.isTrusted && event.target !== focusedField && menu.close(), true);

chrome.runtime.onMessage.addListener((order: FillOrder | { kind: "close"; overlay: "menu" | "offer" }, sender, reply) => {
  if (sender.id !== chrome.runtime.id || sender.tab) return false;
  if (order.kind === "close") (order.overlay === "menu" ? menu : bar).close();
  else reply(fill(order));
  return false;
});

function fill(order: FillOrder): FillAnswer {
  if (location.origin !== order.origin) return { refused: "ORIGIN_CHANGED" };
  if (order.via === "menu") {
    if (!menu.shown) return { refused: "NO_MENU" };
    if (menu.covered()) return { refused: "MENU_COVERED" };
  }
  const root = focusedField?.isConnected ? (focusedField.form ?? document) : document;
  const targets = targetsOf(root, order.fields, focusedField);
  if (targets.length === 0) return { refused: "NO_VISIBLE_FIELD" };
  filling = true;
  try {
    for (const [input, value] of targets) put(input, value);
  } finally {
    filling = false;
  }
  if (order.lingerMs) setTimeout(() => menu.close(), order.lingerMs);
  else menu.close();
  return { filled: targets.length };
}

/** A login form sent: its username and passwords go to the service worker, which decides whether to offer a save. */
let lastSent = 0;
function sent(form: ParentNode): void {
  if (Date.now() - lastSent < 1000) return;
  const passwords = inputsOf(form).filter((i) => i.type === "password" && i.value !== "");
  const user = usernameFor(form);
  const fresh = passwords.filter(isNewPassword);
  const current = passwords.find((i) => !isNewPassword(i));
  if (passwords.length === 0 && !user?.value) return;
  lastSent = Date.now();
  void ask({
    kind: "submitted",
    username: user?.value ?? "",
    password: current?.value ?? "",
    ...(fresh[0] && { newPassword: fresh[0].value }),
    ...(current && fresh[0] && { currentPassword: current.value }),
  });
  // A page that signs in without loading another one shows the offer where it is.
  setTimeout(() => void showOffer(), 1500);
}

document.addEventListener("submit", (event) => event.isTrusted && sent(event.target as HTMLFormElement), true);
document.addEventListener(
  "click",
  (event) => {
    const button = (event.target as Element | null)?.closest?.("button, input[type=submit]") as HTMLButtonElement | HTMLInputElement | null;
    if (!event.isTrusted || !button || (button.type !== "submit" && button.form)) return;
    sent(button.form ?? document);
  },
  true,
);

async function showOffer(): Promise<void> {
  if (window !== window.top || bar.shown) return;
  const answer = await ask<{ token?: string }>({ kind: "pending-offer" });
  if (answer?.token) bar.open(answer.token, undefined, 4);
}

void showOffer();
