/**
 * The extension as a passkey provider. A page's `navigator.credentials.create` or `.get` for a
 * passkey reaches the service worker from the page-world script through the top frame's bridge
 * (extension/src/passkeys/page.ts, extension/src/content/passkeys.ts), with the frame's origin as
 * Chromium names it, never as the page says it. Nothing is made, listed or signed until the person
 * answers the prompt (the menu page, drawn where the page cannot reach it) with a trusted click:
 *
 * - **create**: the passkey is made for the relying party the page may claim (sdk/passkeys), saved
 *   on the login for that site and account in the vault chosen (or a new login), and only then
 *   given to the page; a passkey the site excludes that the vault holds refuses, as browsers do;
 * - **get**: the vault's passkeys of that relying party (named by the site, or discoverable) are
 *   listed; the one chosen signs with its counter moved on, saved on its item first (a race with
 *   another member's sign-in is read again and signed again), then the answer goes to the page.
 *
 * Locked, in a frame below the top one, for a conditional (autofill) request, with no passkey to
 * offer, or when the person chooses "Use another way", the browser's own authenticators answer.
 */
import { ApiError, completeItemUrl, sentence, type Item } from "../../../sdk";
import {
  assertPasskey,
  createPasskey,
  DOM_EXCEPTION_NAME,
  PasskeyError,
  passkeysFor,
  relyingPartyFor,
  type AssertionRequest,
  type CreationRequest,
  type Passkey,
} from "../../../sdk/passkeys";
import { fromBase64Url } from "../../../protocol/encoding";
import type { PasskeyAnswer, PasskeyCall, PasskeyChoice, PasskeyView } from "../messages";
import { forget, frameOf, register, type Frame } from "./menus";
import { isUnlocked, onLock, opened, unlockedClient } from "./vault";

type PageFrame = Omit<Frame, "at" | "fieldKind" | "offerId" | "passkeyId">;

interface Pending {
  id: string;
  frame: PageFrame;
  call: PasskeyCall;
  request: CreationRequest | AssertionRequest;
  rpId: string;
  answer: Promise<PasskeyAnswer>;
  resolve(answer: PasskeyAnswer): void;
}

const pending = new Map<string, Pending>();
const BROWSER: PasskeyAnswer = { use: "browser" };
/** At most this many credential ids in a site's list, and this long a byte string: a page cannot make the worker hold more. */
const MAX_IDS = 64;
const MAX_BYTES_TEXT = 1400;
/** At most this many calls wait for the person at once; the oldest beyond it goes to the browser (a page that calls in a loop holds nothing up). */
const MAX_PENDING = 16;

onLock(() => {
  for (const p of pending.values()) p.resolve(BROWSER);
  pending.clear();
});

const bytes = (text: unknown): Uint8Array => {
  if (typeof text !== "string" || text.length > MAX_BYTES_TEXT)
    throw new PasskeyError("BAD_REQUEST", "a byte string of the request is not base64url");
  try {
    return fromBase64Url(text);
  } catch {
    throw new PasskeyError("BAD_REQUEST", "a byte string of the request is not base64url");
  }
};
const ids = (list: unknown): Array<{ id: Uint8Array }> => {
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.length > MAX_IDS) throw new PasskeyError("BAD_REQUEST", "a list of credentials is too long");
  return list.map((c: { id?: unknown }) => ({ id: bytes(c?.id) }));
};
const text = (v: unknown, max = 256): string => (typeof v === "string" ? v.slice(0, max) : "");

/** The page's call as the SDK's request, with the frame's own origin; throws `PasskeyError` for one that is malformed. */
function requestOf(call: PasskeyCall, origin: string): CreationRequest | AssertionRequest {
  if (call.op === "create") {
    const params = Array.isArray(call.pubKeyCredParams) ? call.pubKeyCredParams.slice(0, 16) : [];
    return {
      origin,
      rp: { ...(typeof call.rp?.id === "string" && { id: call.rp.id }), name: text(call.rp?.name) },
      user: { id: bytes(call.user?.id), name: text(call.user?.name), displayName: text(call.user?.displayName) },
      challenge: bytes(call.challenge),
      pubKeyCredParams: params.map((p) => ({ type: text(p?.type), alg: Number(p?.alg) })),
      excludeCredentials: ids(call.excludeCredentials),
      ...(typeof call.residentKey === "string" && { residentKey: call.residentKey }),
    };
  }
  return {
    origin,
    ...(typeof call.rpId === "string" && { rpId: call.rpId }),
    challenge: bytes(call.challenge),
    allowCredentials: ids(call.allowCredentials),
  };
}

const refusal = (err: unknown): PasskeyAnswer =>
  err instanceof PasskeyError
    ? { error: { name: DOM_EXCEPTION_NAME[err.code], message: err.message } }
    : { error: { name: "NotAllowedError", message: sentence(err) } };

/**
 * A page's passkey call: a token for the prompt (and its height in rows), or the answer at once
 * (the browser's own authenticators, or the refusal a browser would give).
 */
export async function requestPasskey(
  frame: PageFrame,
  call: PasskeyCall,
): Promise<{ token: string; rows: number } | { answer: PasskeyAnswer }> {
  if (frame.frameId !== 0 || !(await isUnlocked())) return { answer: BROWSER };
  let request: CreationRequest | AssertionRequest;
  let rpId: string;
  try {
    request = requestOf(call, frame.origin);
    rpId = relyingPartyFor(frame.origin, call.op === "create" ? call.rp?.id : call.rpId);
  } catch (err) {
    return { answer: refusal(err) };
  }
  const items = await opened();
  await items.ready();
  let rows = 3;
  if (call.op === "get") {
    const choices = passkeysFor(
      request as AssertionRequest,
      items.passkeys().map((p) => p.passkey),
    );
    if (choices.length === 0) return { answer: BROWSER };
    rows = Math.min(2 + choices.length, 6);
  } else if (items.writable().length === 0) return { answer: BROWSER };
  const id = crypto.randomUUID();
  let resolve!: (answer: PasskeyAnswer) => void;
  const answer = new Promise<PasskeyAnswer>((r) => (resolve = r));
  for (const [oldest, p] of pending) {
    if (pending.size < MAX_PENDING) break;
    p.resolve(BROWSER);
    pending.delete(oldest);
  }
  pending.set(id, { id, frame, call, request, rpId, answer, resolve });
  const token = register({ ...frame, fieldKind: "login", passkeyId: id });
  return { token, rows };
}

function pendingOf(token: string): Pending | undefined {
  const id = frameOf(token)?.passkeyId;
  return id ? pending.get(id) : undefined;
}

/**
 * Waits for the person's answer to the prompt of `token`: the bridge of the document that asked
 * waits (and keeps the page's call open meanwhile); any other frame gets nothing of it.
 */
export async function waitPasskey(token: string, frame: PageFrame): Promise<PasskeyAnswer> {
  const p = pendingOf(token);
  if (!p || p.frame.tabId !== frame.tabId || p.frame.frameId !== frame.frameId || p.frame.documentId !== frame.documentId) return BROWSER;
  try {
    return await p.answer;
  } finally {
    pending.delete(p.id);
    forget(token);
  }
}

/** What the prompt shows: names only, never a key. */
export async function passkeyView(token: string): Promise<PasskeyView | undefined> {
  const p = pendingOf(token);
  if (!p) return undefined;
  const items = await opened();
  if (p.call.op === "create")
    return { op: "create", site: p.rpId, user: (p.request as CreationRequest).user.name, vaults: items.writable() };
  const usable = new Set(
    passkeysFor(
      p.request as AssertionRequest,
      items.passkeys().map((x) => x.passkey),
    ),
  );
  return {
    op: "get",
    site: p.rpId,
    choices: items
      .passkeys()
      .filter((x) => usable.has(x.passkey))
      .map((x) => ({
        key: `${x.key}/${x.passkey.credentialId}`,
        name: items.summary(x.key)?.name ?? "",
        user: x.passkey.userName || x.passkey.userDisplayName,
        vaultName: items.summary(x.key)?.vaultName ?? "",
      })),
  };
}

/** The person's answer: the page's call is answered with it, and the prompt says what was done. */
export async function choosePasskey(token: string, choice: PasskeyChoice): Promise<{ passkeySaved?: string; signedIn?: string }> {
  const p = pendingOf(token);
  if (!p) throw new Error("This request has expired: the page may ask again.");
  if ("decline" in choice) {
    p.resolve(BROWSER);
    return {};
  }
  try {
    if ("save" in choice && p.call.op === "create") {
      const registration = await save(p, choice.save);
      p.resolve({ credential: registration as unknown as Record<string, unknown> });
      return { passkeySaved: p.rpId };
    }
    if ("use" in choice && p.call.op === "get") {
      const assertion = await use(p, choice.use);
      p.resolve({ credential: assertion as unknown as Record<string, unknown> });
      return { signedIn: p.rpId };
    }
    throw new Error("That answer does not fit this request.");
  } catch (err) {
    // The site was refused (a passkey it excludes): told as a browser would tell it. Anything else: said in the prompt, and the page may try again.
    if (err instanceof PasskeyError && err.code === "EXCLUDED") p.resolve(refusal(err));
    throw err;
  }
}

/** Makes the passkey and saves it (on the login for this site and account in that vault, or a new login) before the page gets it. */
async function save(p: Pending, vaultId: string) {
  const items = await opened();
  if (!items.writable().some((v) => v.vaultId === vaultId)) throw new Error("You cannot save into that vault.");
  const request = p.request as CreationRequest;
  const { passkey, registration } = await createPasskey(
    request,
    items.passkeys().map((x) => x.passkey),
  );
  const client = await unlockedClient();
  const page = p.frame.url;
  const login = items
    .loginsFor(page)
    .filter((e) => e.vaultId === vaultId && e.username === request.user.name)
    .map((e) => items.item(e.key))
    .find((i): i is Item => i !== undefined);
  if (login)
    await client.items.edit(vaultId, login.itemId, withPasskeys(login, [...(login.passkeys ?? []), passkey]), { revision: login.revision });
  else
    await client.items.add(vaultId, {
      name: request.rp.name || p.rpId,
      type: "login",
      fields: { username: request.user.name },
      urls: [{ url: completeItemUrl(p.frame.origin)!, match: "domain" }],
      passkeys: [passkey],
    });
  await items.reload();
  return registration;
}

const withPasskeys = ({ itemId: _i, vaultId: _v, revision: _r, createdAt: _c, updatedAt: _u, ...content }: Item, passkeys: Passkey[]) => ({
  ...content,
  passkeys,
});

/**
 * Signs with the passkey chosen, its counter moved on and saved on its item first: a revision that
 * moved meanwhile (another member signed in with it) is read again and signed again, so no two
 * sign-ins give the site one counter.
 */
async function use(p: Pending, choice: string) {
  const items = await opened();
  const [vaultId, itemId, credentialId] = choice.split("/");
  const client = await unlockedClient();
  for (let attempt = 0; ; attempt++) {
    const item = attempt === 0 ? items.item(`${vaultId}/${itemId}`) : await client.items.get(vaultId!, itemId!);
    const passkey = item?.passkeys?.find((k) => k.credentialId === credentialId);
    if (!item || !passkey || passkeysFor(p.request as AssertionRequest, [passkey]).length === 0)
      throw new PasskeyError("NO_PASSKEY", "That passkey is no longer in your vaults.");
    const { assertion, counter } = await assertPasskey(p.request as AssertionRequest, passkey);
    const next = item.passkeys!.map((k) => (k === passkey ? { ...k, counter } : k));
    try {
      await client.items.edit(item.vaultId, item.itemId, withPasskeys(item, next), { revision: item.revision });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && attempt < 3) continue;
      throw err;
    }
    void items.reload().catch(() => undefined);
    return assertion;
  }
}
