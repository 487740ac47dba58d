/**
 * What a field on a page is, for the menu and the fill: a login's username or password, a new
 * password, a one-time code, a card's or an identity's field. Read from what pages say of their
 * fields (`autocomplete`, `type`, names), as the browsers' own autofill does.
 */
import { fieldIsFillable } from "../../../sdk/autofill/fields";
import type { FieldKind, FillField } from "../messages";
import { isOurs } from "./overlay";

const TEXTUAL = new Set(["text", "email", "tel", "", "search", "url"]);
const USERNAME_NAME = /user|login|email|e-mail|account|identifier|member/i;
const CODE_NAME = /otp|totp|2fa|mfa|one.?time|verification.?code|auth.?code|security.?code/i;

const tokens = (input: HTMLInputElement) => (input.getAttribute("autocomplete") ?? "").toLowerCase().split(/\s+/);
const named = (input: HTMLInputElement) => `${input.name} ${input.id}`;
const scope = (input: HTMLInputElement): ParentNode => input.form ?? input.ownerDocument;

export const inputsOf = (root: ParentNode): HTMLInputElement[] => [...root.querySelectorAll("input")];
const passwordsIn = (root: ParentNode) => inputsOf(root).filter((i) => i.type === "password");

/** A password field that takes a new password: said so, or one of several in a form none of which says it is the current one. */
export function isNewPassword(input: HTMLInputElement): boolean {
  if (input.type !== "password") return false;
  const ac = tokens(input);
  if (ac.includes("new-password")) return true;
  if (ac.includes("current-password")) return false;
  return passwordsIn(scope(input)).length >= 2;
}

function isUsername(input: HTMLInputElement): boolean {
  if (!TEXTUAL.has(input.type)) return false;
  const ac = tokens(input);
  if (ac.includes("username")) return true;
  if (ac.some((t) => t.startsWith("cc-") || ["name", "tel", "street-address", "address-line1", "postal-code"].includes(t))) return false;
  const passwords = passwordsIn(scope(input));
  // The text field just before a password field, or one named for it in a form with no password (a two-step login's first step).
  if (passwords.length > 0) return usernameFor(scope(input)) === input;
  return ac.includes("email") || USERNAME_NAME.test(named(input));
}

export function kindOf(target: EventTarget | null): FieldKind | undefined {
  if (!(target instanceof HTMLInputElement)) return undefined;
  const ac = tokens(target);
  if (ac.includes("one-time-code") || (TEXTUAL.has(target.type) && CODE_NAME.test(named(target)))) return "code";
  if (ac.some((t) => t.startsWith("cc-"))) return "card";
  if (target.type === "password") return isNewPassword(target) ? "new-password" : "login";
  if (isUsername(target)) return "login";
  if (ac.some((t) => ["name", "email", "tel", "street-address", "address-line1"].includes(t))) return "identity";
  return undefined;
}

/** The username field of a form: one that says so, else the last text field before its first password field. */
export function usernameFor(root: ParentNode): HTMLInputElement | undefined {
  const inputs = inputsOf(root);
  const said = inputs.find((i) => TEXTUAL.has(i.type) && tokens(i).includes("username"));
  if (said) return said;
  const first = inputs.findIndex((i) => i.type === "password");
  const before = (first < 0 ? inputs : inputs.slice(0, first)).filter((i) => TEXTUAL.has(i.type));
  return first < 0 ? before.find((i) => tokens(i).includes("email") || USERNAME_NAME.test(named(i))) : before.pop();
}

/** Whether the person can see and use the field now: measured here, decided by `fieldIsFillable`. */
export function visible(input: HTMLInputElement): boolean {
  const rect = input.getBoundingClientRect();
  const style = getComputedStyle(input);
  let opacity = 1;
  for (let el: Element | null = input; el; el = el.parentElement) opacity *= Number(getComputedStyle(el).opacity);
  const doc = input.ownerDocument.documentElement;
  const inPage =
    rect.right > 0 &&
    rect.bottom > 0 &&
    rect.left < Math.max(doc.scrollWidth, innerWidth) &&
    rect.top < Math.max(doc.scrollHeight, innerHeight);
  const x = rect.left + Math.min(rect.width / 2, 8);
  const y = rect.top + rect.height / 2;
  const offScreen = rect.width === 0 || y < 0 || y > innerHeight || x < 0 || x > innerWidth;
  const top = offScreen ? null : document.elementFromPoint(x, y);
  const onTop = offScreen || top === input || isOurs(top);
  return fieldIsFillable({
    type: input.type,
    width: rect.width,
    height: rect.height,
    display: style.display,
    visibility: style.visibility,
    opacity,
    disabled: input.disabled,
    readOnly: input.readOnly,
    inViewport: inPage,
    clipped: !onTop,
  });
}

const AUTOCOMPLETE: Partial<Record<FillField, string[]>> = {
  code: ["one-time-code"],
  cardholder: ["cc-name"],
  cardNumber: ["cc-number"],
  cardExpiry: ["cc-exp"],
  cardCode: ["cc-csc"],
  fullName: ["name"],
  email: ["email"],
  phone: ["tel"],
  address: ["street-address", "address-line1"],
};

/** The visible fields of `root` each value goes into. */
export function targetsOf(
  root: ParentNode,
  fields: Partial<Record<FillField, string>>,
  focused?: HTMLInputElement,
): Array<[HTMLInputElement, string]> {
  const shown = inputsOf(root).filter(visible);
  const out: Array<[HTMLInputElement, string]> = [];
  if (fields.username !== undefined) {
    const user = usernameFor(root);
    if (user && shown.includes(user)) out.push([user, fields.username]);
  }
  if (fields.password !== undefined) {
    const password = shown.find((i) => i.type === "password" && !isNewPassword(i));
    if (password) out.push([password, fields.password]);
  }
  if (fields.newPassword !== undefined) for (const i of shown.filter(isNewPassword)) out.push([i, fields.newPassword]);
  for (const [field, names] of Object.entries(AUTOCOMPLETE) as Array<[FillField, string[]]>) {
    const value = fields[field];
    if (value === undefined) continue;
    const input =
      shown.find((i) => tokens(i).some((t) => names.includes(t))) ??
      (field === "code" && focused && shown.includes(focused) ? focused : undefined);
    if (input) out.push([input, value]);
  }
  return out;
}

/** Sets a field's value as typing would, so the page's own scripts see it. */
export function put(input: HTMLInputElement, value: string): void {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!;
  input.focus();
  setter.call(input, value);
  input.dispatchEvent(new Event("input", { bubbles: true }));
  input.dispatchEvent(new Event("change", { bubbles: true }));
}
