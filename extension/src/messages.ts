/**
 * What the extension's parts say to one another through `chrome.runtime` messages. The service
 * worker (background/) holds the keys and answers; the popup and the inline menu are extension
 * pages; the content script runs beside each web page and is told the least it needs: never a
 * key, a secret only in the one fill it is asked to make.
 *
 * The service worker takes the sender from Chromium (`sender.url`, `sender.tab`, `sender.frameId`,
 * `sender.documentId`), never from a message's body, and answers each kind only to the part it is
 * for (background/senders.ts).
 */

/** Where the extension stands: nothing but the lock screen shows unless `unlocked`. */
export type VaultState =
  | { state: "signed-out"; server: string; email: string; notice?: string }
  | { state: "locked"; server: string; email: string }
  | { state: "unlocked"; server: string; email: string };

/** One item as the popup and the menu list it: what it is called and for whom, never its secrets. */
export interface ItemSummary {
  /** `<vaultId>/<itemId>`. */
  key: string;
  vaultId: string;
  itemId: string;
  vaultName: string;
  name: string;
  type: string;
  username: string;
  /** The first website, as shown. */
  website?: string;
  hasPassword: boolean;
  hasTotp: boolean;
}

/** The kinds of field the content script asks a menu for. */
export type FieldKind = "login" | "new-password" | "code" | "card" | "identity";

/** What the inline menu (menu.html) shows for the field it was opened on. */
export type MenuData =
  | { mode: "locked" }
  | { mode: "gone" }
  | {
      mode: "fill";
      fieldKind: FieldKind;
      site: string;
      entries: ItemSummary[];
      /** Why nothing is offered here, as a sentence (an http page, a look-alike, a frame of another site). */
      refusal?: string;
    }
  | { mode: "offer"; offer: OfferView }
  | { mode: "passkey"; passkey: PasskeyView };

/** What the passkey prompt (the menu page, at the top of the page) asks the person. */
export type PasskeyView =
  | {
      op: "create";
      /** The relying party the passkey is for (a domain), and the account the site names. */
      site: string;
      user: string;
      /** The vaults the person may save into, verified names only. */
      vaults: Array<{ vaultId: string; name: string }>;
    }
  | {
      op: "get";
      site: string;
      /** The vault's passkeys this page may use. */
      choices: Array<{ key: string; name: string; user: string; vaultName: string }>;
    };

/**
 * A page's `navigator.credentials.create` or `.get` for a passkey, as the page-world script relays
 * it (extension/src/passkeys/page.ts): every byte string base64url. The origin is never in it: the
 * service worker takes the frame's origin from Chromium.
 */
export type PasskeyCall =
  | {
      op: "create";
      rp: { id?: string; name: string };
      user: { id: string; name: string; displayName: string };
      challenge: string;
      pubKeyCredParams: Array<{ type: string; alg: number }>;
      excludeCredentials?: Array<{ id: string }>;
      residentKey?: string;
    }
  | { op: "get"; rpId?: string; challenge: string; allowCredentials?: Array<{ id: string }> };

/** What the page-world script is told: use the browser's own authenticators, give this credential (WebAuthn's JSON), or reject. */
export type PasskeyAnswer = { use: "browser" } | { credential: Record<string, unknown> } | { error: { name: string; message: string } };

/** The person's answer in the passkey prompt. */
export type PasskeyChoice = { save: string } | { use: string } | { decline: true };

/**
 * A WebAuthn ceremony for the account's own passkeys (signing in, unlocking, registering one),
 * asked by the SDK in the service worker and run by the popup, which has a document to run it in
 * (background/ceremonies.ts): the options as WebAuthn's JSON, and the PRF salt (base64url) the
 * SDK asks for with them. The relying party is the server's (`WEBAUTHN_RP_ID`).
 */
export interface AccountPasskeyCeremony {
  /** Random: only the popup that started the flow is told it, and answers with it. */
  id: string;
  op: "create" | "get";
  options: Record<string, unknown>;
  prfSalt: string;
}

/**
 * The popup's answer to a ceremony: the credential as `PublicKeyCredential.toJSON()` and the PRF's
 * first output (base64url), which the service worker hands to the SDK and keeps nowhere; or why
 * there is none, as a sentence.
 */
export type AccountPasskeyAnswer = { response: Record<string, unknown>; prf?: string } | { error: string };

/** What a flow of ceremonies answers the popup each time: run this ceremony next, or it is over. */
export type CeremonyStep<T> = { ceremony: AccountPasskeyCeremony } | { done: T };

/** A passkey sign-in's outcome as the popup sees it: unlocked, or waiting for the master password of `email` (a passkey without the PRF). */
export type PasskeySignInDone = { unlocked: true } | { unlocked: false; email: string };

/** One of the account's passkeys for signing in, as the popup lists it. */
export interface AccountPasskeyView {
  credentialId: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  /** It unlocks too (its authenticator gave the PRF); otherwise the master password unlocks. */
  unlock: boolean;
}

/** A save or update the extension offers after a login form was sent. */
export interface OfferView {
  kind: "save" | "update";
  site: string;
  username: string;
  /** For an update: the item whose password changes. */
  item?: ItemSummary;
  /** For a save: the vaults the user may write to, verified names only. */
  vaults: Array<{ vaultId: string; name: string }>;
}

/** What the content script is told to put into its page. */
export interface FillOrder {
  kind: "fill";
  /** A click in the inline menu (which must not be covered), or the keyboard shortcut. */
  via: "menu" | "shortcut";
  /** Leave the menu open a moment after the fill: it has something to say (a one-time code copied). */
  lingerMs?: number;
  /** The origin the fill is for: the content script refuses if its document is elsewhere now. */
  origin: string;
  fields: Partial<Record<FillField, string>>;
}

export type FillField =
  | "username"
  | "password"
  | "newPassword"
  | "code"
  | "cardholder"
  | "cardNumber"
  | "cardExpiry"
  | "cardCode"
  | "fullName"
  | "email"
  | "phone"
  | "address";

/** The content script's answer to a fill: how many fields it filled, or why none. */
export type FillAnswer = { filled: number } | { refused: "ORIGIN_CHANGED" | "MENU_COVERED" | "NO_VISIBLE_FIELD" | "NO_MENU" };

export type Request =
  // From the popup.
  | { kind: "state" }
  | { kind: "login"; server: string; email: string; password: string }
  | { kind: "second-factor"; totpCode?: string; recoveryCode?: string }
  | { kind: "unlock"; password: string }
  | { kind: "lock" }
  | { kind: "logout" }
  | { kind: "search"; query: string }
  | { kind: "secret"; key: string; field: "username" | "password" | "totp" }
  | { kind: "copied" }
  | { kind: "web-vault-url"; key?: string }
  // From the popup: the account's own passkeys (ceremonies run in the popup, background/ceremonies.ts).
  /** Signs in with a passkey at `server`; without `server`, unlocks the locked account (a passkey of that account only). */
  | { kind: "account-passkey-sign-in"; server?: string }
  | { kind: "account-passkey-answer"; id: string; answer: AccountPasskeyAnswer }
  /** The master password after a passkey sign-in without the PRF. */
  | { kind: "account-passkey-password"; password: string }
  /** The person gave up (or closed the popup): the ceremony waiting is refused, a sign-in waiting for the password ended. */
  | { kind: "account-passkey-cancel" }
  | { kind: "account-passkeys" }
  | { kind: "account-passkey-add"; name: string; password: string }
  | { kind: "account-passkey-remove"; credentialId: string }
  // From a content script.
  | { kind: "field-focus"; fieldKind: FieldKind; ancestors?: string[] }
  | { kind: "submitted"; username: string; password: string; newPassword?: string; currentPassword?: string }
  | { kind: "pending-offer" }
  | { kind: "passkey-request"; call: PasskeyCall }
  | { kind: "passkey-wait"; token: string }
  // From the inline menu or the offer bar.
  | { kind: "menu-data"; token: string }
  | { kind: "menu-fill"; token: string; key: string }
  | { kind: "menu-generate"; token: string }
  | { kind: "offer-save"; token: string; vaultId: string }
  | { kind: "offer-update"; token: string }
  | { kind: "offer-dismiss"; token: string }
  | { kind: "passkey-choose"; token: string; choice: PasskeyChoice };

/** Every answer may instead be an error, as a sentence the part shows as it is. */
export type Failure = { error: string; code?: string };

export const isFailure = (answer: unknown): answer is Failure =>
  typeof answer === "object" && answer !== null && typeof (answer as Failure).error === "string";

/** Sends a request to the service worker; a failure becomes an Error carrying the sentence. */
export async function ask<T>(request: Request): Promise<T> {
  const answer: unknown = await chrome.runtime.sendMessage(request);
  if (isFailure(answer)) throw Object.assign(new Error(answer.error), { code: answer.code });
  return answer as T;
}
