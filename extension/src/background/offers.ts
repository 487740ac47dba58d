/**
 * Save and update offers. A content script reports a login form sent with its values; the service
 * worker compares them with the logins for that site and, when the vault does not hold them,
 * keeps an offer for the tab (in memory, two minutes). The next page of the same site in that tab
 * shows it in an offer bar (an extension page, like the menu); nothing is written until the user
 * chooses a vault and saves, or accepts the update. A save is an ordinary item write through the
 * SDK, roster-checked like every write; an update keeps the old password in the item's history.
 */
import { completeItemUrl } from "../../../sdk";
import { siteOf } from "../../../sdk/autofill";
import type { OfferView } from "../messages";
import { closeIn, forget, frameOf, register, type Frame } from "./menus";
import { onLock, opened, unlockedClient } from "./vault";

const OFFER_MS = 2 * 60_000;

interface Offer {
  id: string;
  kind: "save" | "update";
  tabId: number;
  /** The registrable domain of the page the form was sent from. */
  domain: string;
  origin: string;
  username: string;
  password: string;
  itemKey?: string;
  at: number;
}

const offers = new Map<number, Offer>();
/** A first step's username (a two-step login), per tab, for the password step after it. */
const firstSteps = new Map<number, { domain: string; username: string; at: number }>();

// The passwords a form sent are not kept past a lock or a sign-out, nor saved into another account.
onLock(() => {
  offers.clear();
  firstSteps.clear();
});

export interface Submitted {
  username: string;
  password: string;
  newPassword?: string;
  currentPassword?: string;
}

/** A login form was sent from this frame: keeps an offer when the vault does not hold what was sent. */
export async function submitted(tabId: number, frameUrl: string, origin: string, sent: Submitted): Promise<void> {
  const site = siteOf(frameUrl);
  if (!site) return;
  for (const [tab, offer] of offers) if (Date.now() - offer.at > OFFER_MS) offers.delete(tab);
  const items = await opened();
  await items.ready();
  const step = firstSteps.get(tabId);
  const password = sent.newPassword || sent.password;
  if (!password) {
    if (sent.username) firstSteps.set(tabId, { domain: site.domain, username: sent.username, at: Date.now() });
    return;
  }
  const username = sent.username || (step && step.domain === site.domain && Date.now() - step.at < OFFER_MS ? step.username : "");
  const logins = items.loginsFor(frameUrl);
  const byName = logins.filter((e) => e.username === username);
  const held = (key: string) => items.item(key)?.fields.password;
  if (byName.some((e) => held(e.key) === password)) {
    offers.delete(tabId);
    return;
  }
  const changed =
    byName[0] ??
    (sent.currentPassword ? logins.find((e) => held(e.key) === sent.currentPassword) : undefined) ??
    (sent.newPassword && logins.length === 1 ? logins[0] : undefined);
  offers.set(tabId, {
    id: crypto.randomUUID(),
    kind: changed ? "update" : "save",
    tabId,
    domain: site.domain,
    origin,
    username: changed?.username || username,
    password,
    itemKey: changed?.key,
    at: Date.now(),
  });
}

/** The offer for this tab, when the page asking is of the same site: a token for its bar. */
export function pendingOffer(tabId: number, frame: Omit<Frame, "at" | "fieldKind" | "offerId">): string | undefined {
  const offer = offers.get(tabId);
  if (!offer || Date.now() - offer.at > OFFER_MS) return undefined;
  if (siteOf(frame.url)?.domain !== offer.domain || frame.frameId !== 0) return undefined;
  return register({ ...frame, fieldKind: "login", offerId: offer.id });
}

function offerOf(token: string): Offer | undefined {
  const frame = frameOf(token);
  if (!frame?.offerId) return undefined;
  const offer = offers.get(frame.tabId);
  return offer?.id === frame.offerId ? offer : undefined;
}

export async function offerView(token: string): Promise<OfferView | undefined> {
  const offer = offerOf(token);
  if (!offer) return undefined;
  const items = await opened();
  const item = offer.itemKey ? items.summary(offer.itemKey) : undefined;
  const { urls: _urls, ...shown } = item ?? { urls: [] };
  return {
    kind: offer.kind,
    site: offer.domain,
    username: offer.username,
    ...(item && { item: shown as OfferView["item"] }),
    vaults: items.writable(),
  };
}

/** Saves the offered login as a new item in the vault chosen. */
export async function save(token: string, vaultId: string): Promise<{ saved: string }> {
  const offer = offerOf(token);
  if (!offer) throw new Error("This offer has expired.");
  const items = await opened();
  if (!items.writable().some((v) => v.vaultId === vaultId)) throw new Error("You cannot save into that vault.");
  const client = await unlockedClient();
  await client.items.add(vaultId, {
    name: offer.domain,
    type: "login",
    fields: { username: offer.username, password: offer.password },
    urls: [{ url: completeItemUrl(offer.origin)!, match: "domain" }],
  });
  done(token, offer, 2500);
  await items.reload();
  return { saved: offer.domain };
}

/** Changes the offered item's password; the item's history keeps the one before. */
export async function update(token: string): Promise<{ updated: string }> {
  const offer = offerOf(token);
  if (!offer?.itemKey) throw new Error("This offer has expired.");
  const items = await opened();
  const item = items.item(offer.itemKey);
  if (!item) throw new Error("That item is no longer in your vaults.");
  const client = await unlockedClient();
  await client.items.edit(
    item.vaultId,
    item.itemId,
    { ...item, fields: { ...item.fields, password: offer.password } },
    { revision: item.revision },
  );
  done(token, offer, 2500);
  await items.reload();
  return { updated: item.name };
}

export function dismiss(token: string): void {
  const offer = offerOf(token);
  if (offer) done(token, offer);
}

/** The offer is answered: the bar says so for a moment (a save, an update) or goes at once. */
function done(token: string, offer: Offer, linger = 0): void {
  const frame = frameOf(token);
  offers.delete(offer.tabId);
  if (!frame) return;
  setTimeout(() => {
    forget(token);
    void closeIn(frame, "offer");
  }, linger);
}
