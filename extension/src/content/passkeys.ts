/**
 * The passkey bridge, in the top frame's isolated world from document_start: it carries a passkey
 * call of the page-world script (extension/src/passkeys/page.ts) to the service worker, draws the
 * prompt (the extension's menu page, as the inline menu is drawn: content/overlay.ts) when the
 * worker has something to ask the person, and carries the answer back. It adds nothing of its own:
 * the worker reads the frame's origin from Chromium, and only a trusted click in the prompt answers.
 */
import type { PasskeyAnswer, PasskeyCall } from "../messages";
import { Overlay } from "./overlay";

const CHANNEL = "vault-extension-passkeys";
const BROWSER: PasskeyAnswer = { use: "browser" };
const prompt = new Overlay("passkey");
/** One call at a time: a second while the person is asked is refused, as a browser refuses overlapping calls. */
let busy = false;

const post = (body: object) => postMessage({ channel: CHANNEL, to: "page", ...body }, location.origin);

async function ask<T>(request: object): Promise<T | undefined> {
  try {
    const answer = (await chrome.runtime.sendMessage(request)) as T & { error?: string };
    return answer && typeof answer === "object" && "error" in answer && typeof answer.error === "string" ? undefined : answer;
  } catch {
    return undefined; // the extension was reloaded or removed: the browser answers
  }
}

async function relay(id: number, call: PasskeyCall): Promise<void> {
  if (busy) return post({ id, answer: { error: { name: "NotAllowedError", message: "Another passkey request is waiting for you." } } });
  busy = true;
  let answer: PasskeyAnswer = BROWSER;
  try {
    const first = await ask<{ token?: string; rows?: number; answer?: PasskeyAnswer }>({ kind: "passkey-request", call });
    if (first?.answer) answer = first.answer;
    else if (first?.token) {
      prompt.open(first.token, undefined, first.rows ?? 3);
      answer = (await ask<PasskeyAnswer>({ kind: "passkey-wait", token: first.token })) ?? BROWSER;
    }
  } finally {
    busy = false;
    prompt.close();
  }
  post({ id, answer });
}

if (window.top === window) {
  addEventListener("message", (event: MessageEvent) => {
    const data = event.data as { channel?: string; to?: string; hello?: boolean; id?: number; call?: PasskeyCall } | null;
    if (event.source !== window || data?.channel !== CHANNEL || data.to !== "extension") return;
    if (data.hello) return post({ ready: true });
    if (typeof data.id === "number" && data.call && typeof data.call === "object") void relay(data.id, data.call);
  });
  post({ ready: true });
}
