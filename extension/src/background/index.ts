/**
 * The service worker: the one place the extension holds keys. It answers the popup, the inline
 * menus and the content scripts (messages.ts), each kind only to its part (senders.ts), and locks
 * on idle (vault.ts) and when the computer locks.
 */
import { sentence } from "../../../sdk";
import { totpCode } from "../../../sdk/totp";
import type { Request } from "../messages";
import * as accountPasskeys from "./account-passkeys";
import { CLEAR_ALARM, clearLater, clearNow } from "./clipboard";
import { fill, fillByShortcut, fillGenerated, focused, frameOf as menuFrame, menuData } from "./menus";
import { dismiss, offerView, pendingOffer, save, submitted, update } from "./offers";
import { choosePasskey, passkeyView, requestPasskey, waitPasskey } from "./passkeys";
import { fromPopup as fromPopupPage, mayAsk, MENU_CHOICES } from "./senders";
import { answerFactor, lock, lockIfIdle, login, logout, opened, serverOrigin, state, touch, unlock } from "./vault";

type Sender = chrome.runtime.MessageSender;

/** A content script's frame, as Chromium names it. */
const frameOf = (sender: Sender) => ({
  tabId: sender.tab!.id!,
  frameId: sender.frameId!,
  documentId: sender.documentId,
  url: sender.url!,
  origin: sender.origin ?? new URL(sender.url!).origin,
});

/** The person's own use (the popup, a choice in a menu, an offer bar or a passkey prompt) keeps the vault unlocked; nothing else does. */
async function answer(request: Request, sender: Sender): Promise<unknown> {
  if (fromPopupPage(sender) || (MENU_CHOICES.has(request.kind) && "token" in request && menuFrame(request.token))) await touch();
  else await lockIfIdle();
  return (await fromPopup(request)) ?? fromPage(request, sender);
}

/** The popup's requests; undefined for any other kind. */
async function fromPopup(request: Request): Promise<unknown> {
  switch (request.kind) {
    case "state":
      return state();
    case "login":
      return login(request.server, request.email, request.password);
    case "second-factor":
      return answerFactor(request.totpCode ? { totpCode: request.totpCode } : { recoveryCode: request.recoveryCode ?? "" });
    case "unlock":
      return unlock(request.password).then(() => ({}));
    case "lock":
      return lock().then(() => ({}));
    case "logout":
      return logout().then(() => ({}));
    case "search": {
      const items = await opened();
      await items.ready();
      return { items: items.find(request.query), problem: items.problem };
    }
    case "secret":
      return secret(request.key, request.field);
    case "copied":
      return clearLater().then(() => ({}));
    case "web-vault-url": {
      const server = await serverOrigin();
      const [vaultId] = request.key?.split("/") ?? [];
      return { url: server ? `${server}/#/${vaultId ? `vault/${encodeURIComponent(vaultId)}` : "vaults"}` : undefined };
    }
    case "account-passkey-sign-in":
      return accountPasskeys.signInWithPasskey(typeof request.server === "string" ? request.server : undefined);
    case "account-passkey-answer":
      return accountPasskeys.answer(String(request.id), request.answer);
    case "account-passkey-password":
      return accountPasskeys.unlockWithPassword(request.password);
    case "account-passkey-cancel":
      return accountPasskeys.cancel();
    case "account-passkeys":
      return accountPasskeys.list();
    case "account-passkey-add":
      return accountPasskeys.add(String(request.name ?? ""), request.password);
    case "account-passkey-remove":
      return accountPasskeys.remove(String(request.credentialId));
    default:
      return undefined;
  }
}

/** The content scripts' and the menus' requests. */
async function fromPage(request: Request, sender: Sender): Promise<unknown> {
  switch (request.kind) {
    case "field-focus":
      return focused({ ...frameOf(sender), fieldKind: request.fieldKind, ancestors: (request.ancestors ?? []).slice(0, 20).map(String) });
    case "submitted":
      await submitted(sender.tab!.id!, sender.url!, frameOf(sender).origin, request).catch(() => undefined);
      return {};
    case "pending-offer":
      return { token: pendingOffer(sender.tab!.id!, frameOf(sender)) };
    case "passkey-request":
      return requestPasskey(frameOf(sender), request.call);
    case "passkey-wait":
      return waitPasskey(request.token, frameOf(sender));
    case "passkey-choose":
      return choosePasskey(request.token, request.choice);
    case "menu-data": {
      if (menuFrame(request.token)?.passkeyId) {
        const view = await passkeyView(request.token);
        return view ? { mode: "passkey", passkey: view } : { mode: "gone" };
      }
      if (!menuFrame(request.token)?.offerId) return menuData(request.token);
      const view = await offerView(request.token);
      return view ? { mode: "offer", offer: view } : { mode: "gone" };
    }
    case "menu-fill":
      return fill(request.token, request.key);
    case "menu-generate":
      return fillGenerated(request.token);
    case "offer-save":
      return save(request.token, request.vaultId);
    case "offer-update":
      return update(request.token);
    case "offer-dismiss":
      dismiss(request.token);
      return {};
    default:
      return {};
  }
}

/** A username, a password or the current one-time code of an item, for the popup's copy buttons. */
async function secret(key: string, field: "username" | "password" | "totp"): Promise<{ value: string }> {
  const item = (await opened()).item(key);
  if (!item) throw new Error("That item is no longer in your vaults.");
  if (field === "totp") return { value: item.totp ? totpCode(item.totp).code : "" };
  return { value: (field === "username" ? (item.fields.username ?? item.fields.email) : item.fields.password) ?? "" };
}

chrome.runtime.onMessage.addListener((request: Request & { target?: string }, sender, reply) => {
  if (request.target === "offscreen") return false;
  if (!mayAsk(request.kind, sender)) {
    reply({ error: "Not allowed from here.", code: "FORBIDDEN" });
    return false;
  }
  answer(request, sender).then(reply, (err: unknown) =>
    reply({
      error: err instanceof Error && (err as { code?: string }).code === "LOCKED" ? err.message : sentence(err),
      code: (err as { code?: string }).code,
    }),
  );
  return true;
});

chrome.commands.onCommand.addListener((command, tab) => {
  if (command === "fill-login" && tab?.id !== undefined) void fillByShortcut(tab.id);
});

const IDLE_ALARM = "idle-check";
void chrome.alarms.create(IDLE_ALARM, { periodInMinutes: 1 });

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === CLEAR_ALARM) void clearNow();
  if (alarm.name === IDLE_ALARM) void lockIfIdle();
});

// The computer locked: so does the vault.
chrome.idle.onStateChanged.addListener((next) => {
  if (next === "locked") void lock();
});
