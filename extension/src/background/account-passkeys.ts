/**
 * The popup's requests about the account's own passkeys (not the passkeys kept as items: that is
 * passkeys.ts): signing in or unlocking with one, the master password after one without the PRF,
 * and, unlocked, listing, adding and removing them. Every WebAuthn ceremony runs in the popup
 * (ceremonies.ts); the session they open is vault.ts's. Only the popup asks these (senders.ts).
 */
import { ApiError, InputError, type PasskeyLoginInfo, type PasskeySignInPolicy } from "../../../sdk";
import type { AccountPasskeyAnswer, CeremonyStep, PasskeySignInDone } from "../messages";
import { answerCeremony, cancelFlow, startFlow } from "./ceremonies";
import { dropWaitingPassword, onLock, passkeyPassword, passkeySignIn, unlockedClient } from "./vault";

// A lock or a sign-out refuses the ceremony waiting: a registration does not go on in a locked vault.
onLock(cancelFlow);

/** Signs in at `server`, or unlocks the locked account when none is given: its first ceremony. */
export const signInWithPasskey = (server: string | undefined): Promise<CeremonyStep<PasskeySignInDone>> =>
  startFlow((authenticator) => passkeySignIn(server, authenticator));

export const answer = (id: string, answered: AccountPasskeyAnswer): Promise<CeremonyStep<unknown>> => answerCeremony(id, answered);

export const unlockWithPassword = (password: string): Promise<object> => passkeyPassword(password).then(() => ({}));

export async function cancel(): Promise<object> {
  cancelFlow();
  await dropWaitingPassword();
  return {};
}

export async function list(): Promise<{ passkeys: PasskeyLoginInfo[]; policy: PasskeySignInPolicy }> {
  return (await unlockedClient()).accountPasskeys.list();
}

/** Registers a passkey that signs in (and with the PRF unlocks), with the master password: its first ceremony. */
export async function add(name: string, password: string): Promise<CeremonyStep<{ passkey: PasskeyLoginInfo }>> {
  const client = await unlockedClient();
  if (!name.trim()) throw new Error("Give the passkey a name, to tell it from your others.");
  return startFlow(async (authenticator) => {
    const passkey = await client.accountPasskeys.add({ name: name.trim(), password, authenticator }).catch((err: unknown) => {
      // The answer came from this extension's origin: a server that does not list it refuses every answer the same way.
      if (err instanceof ApiError && err.code === "INVALID" && err.field === "response") throw new InputError(answerRefused());
      throw err;
    });
    return { passkey };
  });
}

const answerRefused = () =>
  `The server did not accept the passkey's answer, so nothing was added. Try again; if it is refused again, the server does not accept passkeys from this extension: its administrator adds ${chrome.runtime.getURL("").replace(/\/$/, "")} to WEBAUTHN_ORIGINS.`;

export async function remove(credentialId: string): Promise<object> {
  await (await unlockedClient()).accountPasskeys.remove(credentialId);
  return {};
}
