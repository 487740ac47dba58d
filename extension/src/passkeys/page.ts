/**
 * In the page's own JavaScript world (a MAIN-world content script of the top frame, run at
 * document_start, before the page's scripts): `navigator.credentials.create` and `.get` for a
 * passkey ask the vault first. The call goes, bytes as base64url, to the extension's bridge in the
 * same frame (content/passkeys.ts) and on to the service worker, which takes the frame's origin
 * from Chromium and asks the person (background/passkeys.ts). Its answer is a credential (built
 * here as the page's `PublicKeyCredential` would be), a refusal as a browser words it, or "use the
 * browser": the page's own call then goes to the browser's authenticators unchanged.
 *
 * What runs here is the page's to inspect and to call: it holds nothing but the call and its
 * answer, both the page's own. Conditional (autofill) requests, security-key-only creations, other
 * credential types and a bridge that does not answer go to the browser.
 */
const CHANNEL = "vault-extension-passkeys";

type Answer = { use: "browser" } | { credential: CredentialJSON } | { error: { name: string; message: string } };
interface CredentialJSON {
  id: string;
  rawId: string;
  authenticatorAttachment: string;
  clientExtensionResults: Record<string, unknown>;
  response: Record<string, string | number | string[] | undefined>;
}

const toB64 = (source: BufferSource): string => {
  const bytes =
    source instanceof ArrayBuffer ? new Uint8Array(source) : new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};
const toBuffer = (text: string): ArrayBuffer => {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
};

function own<T extends object>(target: T, values: Record<string, unknown>): T {
  for (const [key, value] of Object.entries(values)) Object.defineProperty(target, key, { value, enumerable: true });
  return target;
}

/** The vault's answer as the page's `PublicKeyCredential`: `instanceof` holds, and each field and method answers as the browser's would. */
function credentialOf(json: CredentialJSON, op: "create" | "get"): PublicKeyCredential {
  const r = json.response;
  const s = (key: string) => toBuffer(String(r[key]));
  const response =
    op === "create"
      ? own(Object.create(AuthenticatorAttestationResponse.prototype) as object, {
          clientDataJSON: s("clientDataJSON"),
          attestationObject: s("attestationObject"),
          getTransports: () => [...((r.transports as string[]) ?? [])],
          getAuthenticatorData: () => s("authenticatorData"),
          getPublicKey: () => s("publicKey"),
          getPublicKeyAlgorithm: () => r.publicKeyAlgorithm,
        })
      : own(Object.create(AuthenticatorAssertionResponse.prototype) as object, {
          clientDataJSON: s("clientDataJSON"),
          authenticatorData: s("authenticatorData"),
          signature: s("signature"),
          userHandle: r.userHandle ? s("userHandle") : null,
        });
  return own(Object.create(PublicKeyCredential.prototype) as PublicKeyCredential, {
    id: json.id,
    rawId: toBuffer(json.rawId),
    type: "public-key",
    authenticatorAttachment: json.authenticatorAttachment,
    response,
    getClientExtensionResults: () => structuredClone(json.clientExtensionResults),
    toJSON: () => structuredClone(json),
  });
}

function refusal(error: { name: string; message: string }): Error {
  return error.name === "TypeError" ? new TypeError(error.message) : new DOMException(error.message, error.name);
}

(() => {
  const container = globalThis.CredentialsContainer?.prototype;
  if (!container || typeof PublicKeyCredential === "undefined" || window.top !== window) return;
  const nativeCreate = container.create;
  const nativeGet = container.get;

  let ready = false;
  const whenReady: Array<() => void> = [];
  const answers = new Map<number, (answer: Answer) => void>();
  let next = 0;
  addEventListener("message", (event: MessageEvent) => {
    const data = event.data as { channel?: string; to?: string; ready?: boolean; id?: number; answer?: Answer } | null;
    if (event.source !== window || data?.channel !== CHANNEL || data.to !== "page") return;
    if (data.ready) {
      ready = true;
      for (const go of whenReady.splice(0)) go();
      return;
    }
    const answer = answers.get(Number(data.id));
    if (answer && data.answer) {
      answers.delete(Number(data.id));
      answer(data.answer);
    }
  });
  postMessage({ channel: CHANNEL, to: "extension", hello: true }, location.origin);

  /** The vault's answer to a call; "use the browser" when the bridge is not there within two seconds. */
  async function ask(call: object): Promise<Answer> {
    if (!ready) await new Promise<void>((go) => (whenReady.push(go), setTimeout(go, 2000)));
    if (!ready) return { use: "browser" };
    const id = ++next;
    return new Promise((resolve) => {
      answers.set(id, resolve);
      postMessage({ channel: CHANNEL, to: "extension", id, call }, location.origin);
    });
  }

  async function answered(answer: Answer, op: "create" | "get", browser: () => Promise<Credential | null>): Promise<Credential | null> {
    if ("credential" in answer) return credentialOf(answer.credential, op);
    if ("error" in answer) throw refusal(answer.error);
    return browser();
  }

  Object.defineProperty(container, "create", {
    configurable: true,
    writable: true,
    value: async function create(this: CredentialsContainer, options?: CredentialCreationOptions): Promise<Credential | null> {
      const browser = () => nativeCreate.call(this, options);
      const pk = options?.publicKey;
      if (!pk || options?.signal?.aborted || pk.authenticatorSelection?.authenticatorAttachment === "cross-platform") return browser();
      let call: object;
      try {
        const selection = pk.authenticatorSelection;
        call = {
          op: "create",
          rp: { ...(pk.rp.id !== undefined && { id: pk.rp.id }), name: pk.rp.name },
          user: { id: toB64(pk.user.id), name: pk.user.name, displayName: pk.user.displayName },
          challenge: toB64(pk.challenge),
          pubKeyCredParams: (pk.pubKeyCredParams ?? []).map((p) => ({ type: p.type, alg: p.alg })),
          excludeCredentials: (pk.excludeCredentials ?? []).map((c) => ({ id: toB64(c.id) })),
          residentKey: selection?.residentKey ?? (selection?.requireResidentKey ? "required" : undefined),
        };
      } catch {
        return browser(); // a request the browser will judge (and refuse) itself
      }
      return answered(await ask(call), "create", browser);
    },
  });

  Object.defineProperty(container, "get", {
    configurable: true,
    writable: true,
    value: async function get(this: CredentialsContainer, options?: CredentialRequestOptions): Promise<Credential | null> {
      const browser = () => nativeGet.call(this, options);
      const pk = options?.publicKey;
      if (!pk || options?.signal?.aborted || options?.mediation === "conditional") return browser();
      let call: object;
      try {
        call = {
          op: "get",
          ...(pk.rpId !== undefined && { rpId: pk.rpId }),
          challenge: toB64(pk.challenge),
          allowCredentials: (pk.allowCredentials ?? []).map((c) => ({ id: toB64(c.id) })),
        };
      } catch {
        return browser();
      }
      return answered(await ask(call), "get", browser);
    },
  });
})();
