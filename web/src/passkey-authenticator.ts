/**
 * The browser's passkeys as the SDK asks for them (`PasskeyAuthenticator`, sdk/client/passkey-logins.ts):
 * `navigator.credentials.create` / `.get` with the options the SDK hands over as WebAuthn's JSON,
 * and the PRF extension asked with the SDK's salt. The answer goes back as the credential's own
 * JSON; the PRF's first output, when the authenticator gives one, as bytes (the SDK never sends it).
 *
 * What the browser refuses becomes a sentence (an `InputError`): a prompt closed or timed out, a
 * passkey this authenticator holds already, a page at an address where passkeys cannot work.
 */
import { InputError, type PasskeyAuthenticator } from "../../sdk";
import type { Bytes } from "../../protocol/encoding";
import { securityKeyAddressProblem } from "./components/security-key-address";

type Answer = { response: Record<string, unknown>; prf?: Bytes };

/** The passkeys of this browser (its own, a phone's, a security key's), for signing in to the account. */
export const browserPasskeys: PasskeyAuthenticator = {
  async create(options, prfSalt) {
    const rpId = (options.rp as { id?: string } | undefined)?.id;
    const publicKey = usable().parseCreationOptionsFromJSON(options as unknown as PublicKeyCredentialCreationOptionsJSON);
    publicKey.extensions = { ...publicKey.extensions, prf: { eval: { first: prfSalt } } };
    return answer(await ask(() => navigator.credentials.create({ publicKey }), "create", rpId));
  },
  async get(options, prfSalt) {
    const rpId = typeof options.rpId === "string" ? options.rpId : undefined;
    const publicKey = usable().parseRequestOptionsFromJSON(options as unknown as PublicKeyCredentialRequestOptionsJSON);
    publicKey.extensions = { ...publicKey.extensions, prf: { eval: { first: prfSalt } } };
    return answer(await ask(() => navigator.credentials.get({ publicKey }), "get", rpId));
  },
};

/** The browser's PublicKeyCredential, if it reads WebAuthn's JSON options (every current browser does). */
function usable(): typeof PublicKeyCredential {
  if (typeof PublicKeyCredential === "undefined" || typeof PublicKeyCredential.parseRequestOptionsFromJSON !== "function")
    throw new InputError("This browser cannot use passkeys here: use a current browser, or sign in with your email and master password.");
  return PublicKeyCredential;
}

/** The browser's prompt, its refusals said in words; a page at an address where passkeys cannot work is said before the browser is asked. */
async function ask(
  prompt: () => Promise<Credential | null>,
  what: "create" | "get",
  rpId: string | undefined,
): Promise<PublicKeyCredential> {
  const address = securityKeyAddressProblem(location, rpId);
  if (address) throw new InputError(address);
  let credential: Credential | null;
  try {
    credential = await prompt();
  } catch (err) {
    throw refusal(err, what, rpId);
  }
  if (!(credential instanceof PublicKeyCredential)) throw new InputError(NOTHING[what]);
  return credential;
}

const NOTHING = {
  create: "No passkey was made: the browser's prompt was closed or timed out. Nothing was added; try again when you are ready.",
  get: "No passkey was used: the browser's prompt was closed or timed out, or found no passkey for this site. You are not signed in.",
};

function refusal(err: unknown, what: "create" | "get", rpId: string | undefined): unknown {
  const name = err instanceof DOMException || err instanceof Error ? err.name : "";
  if (name === "NotAllowedError" || name === "AbortError") return new InputError(NOTHING[what]);
  if (name === "InvalidStateError" && what === "create")
    return new InputError("This authenticator holds a passkey for your account already: use that one, or remove it from the list first.");
  if (name === "SecurityError")
    return new InputError(
      securityKeyAddressProblem(location, rpId) ?? "The browser refused passkeys at this address: open the web vault at its host name.",
    );
  if (name === "NotSupportedError")
    return new InputError("This authenticator cannot make a passkey this web vault can use (one kept on it, that checks it is you).");
  return err;
}

function answer(credential: PublicKeyCredential): Answer {
  const first = credential.getClientExtensionResults().prf?.results?.first;
  const response = credential.toJSON() as Record<string, unknown>;
  return first === undefined ? { response } : { response, prf: bytesOf(first) };
}

function bytesOf(source: BufferSource): Bytes {
  const view = ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : new Uint8Array(source);
  return new Uint8Array(view);
}
