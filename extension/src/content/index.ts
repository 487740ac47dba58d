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

/**
 * What the person did last, from events the browser marks as theirs: a press on a field, a key.
 * A page's script can focus a field and send a form (those events count as trusted too), but it
 * cannot press or type: the menu opens, and a sent form is reported, only after the person did.
 */
const GESTURE_MS = 1000;
let pressed: { target: EventTarget | null; at: number } = { target: null, at: 0 };
let keyed: { key: string; at: number } = { key: "", at: 0 };
document.addEventListener("pointerdown", (event) => event.isTrusted && (pressed = { target: event.target, at: Date.now() }), true);
document.addEventListener("keydown", (event) => event.isTrusted && (keyed = { key: event.key, at: Date.now() }), true);
const recently = (at: number) => Date.now() - at < GESTURE_MS;

// The person clicked or tabbed into a field: its menu.
document.addEventListener(
  "focusin",
  (event) => {
    const kind = kindOf(event.target);
    if (!kind || !event.isTrusted || filling) return;
    const byPerson = (pressed.target === event.target && recently(pressed.at)) || (keyed.key === "Tab" && recently(keyed.at));
    if (!byPerson) return;
    const field = event.target as HTMLInputElement;
    if (field === focusedField && menu.shown) return;
    focusedField = field;
    void openMenu(field, kind);
  },
  true,
);

// A click on a field brings its menu back (after Escape, or on a field the page focused by itself).
document.addEventListener(
  "click",
  (event) => {
    const kind = kindOf(event.target);
    if (!kind || !event.isTrusted || menu.shown || pressed.target !== event.target || !recently(pressed.at)) return;
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
    // The origins of the frames around this one (Chromium's list): a login frame inside another site's frame is refused.
    const ancestors = [...(location.ancestorOrigins ?? [])];
    const answer = await ask<{ token?: string; rows?: number }>({ kind: "field-focus", fieldKind: kind, ancestors });
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

// A form sent after the person pressed a button or Enter (a script's requestSubmit alone reports nothing).
document.addEventListener(
  "submit",
  (event) =>
    event.isTrusted && (recently(pressed.at) || (keyed.key === "Enter" && recently(keyed.at))) && sent(event.target as HTMLFormElement),
  true,
);
document.addEventListener(
  "click",
  (event) => {
    const button = (event.target as Element | null)?.closest?.("button, input[type=submit]") as HTMLButtonElement | HTMLInputElement | null;
    if (!event.isTrusted || !button || (button.type !== "submit" && button.form) || !recently(pressed.at)) return;
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
