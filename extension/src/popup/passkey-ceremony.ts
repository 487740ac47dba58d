/**
 * The popup's half of the account's passkey ceremonies (background/ceremonies.ts): the service
 * worker's SDK asks a WebAuthn ceremony, the popup runs it with `navigator.credentials` (an
 * extension page may use the server's relying party id, a domain in the extension's host
 * permissions; the answer's origin is `chrome-extension://<id>`) and answers the credential's JSON
 * and the PRF's first output, until the flow is done. The PRF output is passed on, never kept.
 *
 * What the browser refuses becomes a sentence: a prompt closed or timed out, a passkey this
 * authenticator holds already, a relying party the browser does not let the extension use.
 */
import { ask, type AccountPasskeyAnswer, type AccountPasskeyCeremony, type CeremonyStep, type Request } from "../messages";

/** Sends `first` (a request that starts a flow) and runs each ceremony it asks; answers the flow's outcome, or throws its failure. */
export async function throughCeremonies<T>(first: Request): Promise<T> {
  let step = await ask<CeremonyStep<T>>(first);
  while ("ceremony" in step) {
    const answer = await keepingWorkerAwake(perform(step.ceremony));
    step = await ask<CeremonyStep<T>>({ kind: "account-passkey-answer", id: step.ceremony.id, answer });
  }
  return step.done;
}

/**
 * Chromium stops an idle service worker after 30 seconds, and what waits for the person (the flow
 * of this ceremony, a passkey sign-in waiting for the master password) lives in its memory: while
 * they answer, a message now and then keeps it. Answers the function that stops it.
 */
export function keepWorkerAwake(): () => void {
  const timer = setInterval(() => void chrome.runtime.sendMessage({ kind: "state" }).catch(() => undefined), 15_000);
  return () => clearInterval(timer);
}

async function keepingWorkerAwake<T>(work: Promise<T>): Promise<T> {
  const stop = keepWorkerAwake();
  try {
    return await work;
  } finally {
    stop();
  }
}

const NOTHING = {
  create: "No passkey was made: the browser's prompt was closed or timed out. Nothing was added; try again when you are ready.",
  get: "No passkey was used: the browser's prompt was closed or timed out, or found no passkey of this account's server.",
};

async function perform(ceremony: AccountPasskeyCeremony): Promise<AccountPasskeyAnswer> {
  const { op, options } = ceremony;
  const rpId = op === "create" ? (options.rp as { id?: string } | undefined)?.id : (options.rpId as string | undefined);
  try {
    if (typeof PublicKeyCredential === "undefined" || typeof PublicKeyCredential.parseRequestOptionsFromJSON !== "function")
      return { error: "This browser cannot use passkeys here: update it, or use your master password." };
    const prf = { eval: { first: fromBase64Url(ceremony.prfSalt) } };
    let credential: Credential | null;
    if (op === "create") {
      const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options as unknown as PublicKeyCredentialCreationOptionsJSON);
      publicKey.extensions = { ...publicKey.extensions, prf };
      credential = await navigator.credentials.create({ publicKey });
    } else {
      const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options as unknown as PublicKeyCredentialRequestOptionsJSON);
      publicKey.extensions = { ...publicKey.extensions, prf };
      credential = await navigator.credentials.get({ publicKey });
    }
    if (!(credential instanceof PublicKeyCredential)) return { error: NOTHING[op] };
    const first = credential.getClientExtensionResults().prf?.results?.first;
    const response = credential.toJSON() as Record<string, unknown>;
    return first === undefined ? { response } : { response, prf: toBase64Url(first) };
  } catch (err) {
    return { error: refusal(err, op, rpId) };
  }
}

function refusal(err: unknown, op: "create" | "get", rpId: string | undefined): string {
  const name = err instanceof Error || err instanceof DOMException ? err.name : "";
  if (name === "NotAllowedError" || name === "AbortError") return NOTHING[op];
  if (name === "InvalidStateError" && op === "create")
    return "This authenticator holds a passkey for your account already: use that one, or remove it from the list first.";
  if (name === "SecurityError")
    return `The browser does not let the extension use passkeys of ${rpId ?? "this server"} (the server's WEBAUTHN_RP_ID): it must be a host name the extension may reach. Use your master password.`;
  if (name === "NotSupportedError")
    return "This authenticator cannot make a passkey the vault can use (one kept on it, that checks it is you).";
  return err instanceof Error ? err.message : String(err);
}

function toBase64Url(source: BufferSource): string {
  const bytes = ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : new Uint8Array(source);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  // The PRF output is passed on as text; the popup keeps no copy of its bytes.
  bytes.fill(0);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
