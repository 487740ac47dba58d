/**
 * Clearing a copied secret from the clipboard after `clipboardClearSeconds` (30 by default). The
 * popup copies on the user's click; the service worker, which has no clipboard, clears it through
 * an offscreen document (offscreen/). An alarm survives the worker being stopped meanwhile; a short
 * delay (a test's) is a timer, as alarms fire no sooner than 30 s.
 */
import { setting } from "./storage";

export const CLEAR_ALARM = "clear-clipboard";

export async function clearLater(): Promise<void> {
  const ms = (await setting("clipboardClearSeconds", 30)) * 1000;
  if (ms < 30_000) setTimeout(() => void clearNow(), ms);
  else await chrome.alarms.create(CLEAR_ALARM, { when: Date.now() + ms });
}

export async function clearNow(): Promise<void> {
  const url = chrome.runtime.getURL("offscreen.html");
  const open = await chrome.runtime.getContexts({ contextTypes: [chrome.runtime.ContextType.OFFSCREEN_DOCUMENT], documentUrls: [url] });
  if (open.length === 0)
    await chrome.offscreen.createDocument({ url, reasons: [chrome.offscreen.Reason.CLIPBOARD], justification: "Clear a copied password" });
  await chrome.runtime.sendMessage({ target: "offscreen", kind: "clear-clipboard" });
}
