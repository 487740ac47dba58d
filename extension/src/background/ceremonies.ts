/**
 * The account's own passkeys (sdk/client/passkey-logins.ts) need WebAuthn, which runs only where a
 * document is: the popup, not this service worker. So the SDK's `PasskeyAuthenticator` here asks
 * the popup. A flow (a sign-in, an unlock, a registration) starts on a popup request and answers it
 * with the first ceremony the SDK asks (`{ ceremony }`); the popup runs it with
 * `navigator.credentials` and answers (`account-passkey-answer`), and is answered the next
 * ceremony or the outcome (`{ done }`), as a second factor is asked during a password login
 * (vault.ts). Nothing is broadcast: a ceremony is told only in the answer to the popup's own request.
 *
 * Only the popup may start a flow or answer one (senders.ts). One flow at a time: a new one, a
 * lock, a sign-out or the popup's cancel refuses the ceremony waiting. The PRF output the popup
 * answers is handed to the SDK, never stored or logged, and zeroed when the flow ends.
 */
import { InputError, encoding, type PasskeyAuthenticator } from "../../../sdk";
import type { AccountPasskeyAnswer, AccountPasskeyCeremony, CeremonyStep } from "../messages";

/** A ceremony the popup has not answered by then is refused (the popup was closed, the person walked away). */
const CEREMONY_TIMEOUT_MS = 5 * 60_000;

const CANCELLED = "The passkey prompt was cancelled: nothing was changed.";
const TIMED_OUT = "The passkey prompt was not answered in time: nothing was changed. Try again.";

type Answered = { response: Record<string, unknown>; prf?: encoding.Bytes };

interface Asked {
  ceremony: AccountPasskeyCeremony;
  resolve(answer: Answered): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

class Flow<T> {
  private asked?: Asked;
  /** The popup's request waiting for this flow's next step. */
  private onAsk?: (ceremony: AccountPasskeyCeremony) => void;
  private cancelled = false;
  /** Every PRF output handed to the SDK in this flow: zeroed once it ends. */
  private readonly secrets: encoding.Bytes[] = [];
  private readonly result: Promise<T>;

  constructor(run: (authenticator: PasskeyAuthenticator) => Promise<T>) {
    const authenticator: PasskeyAuthenticator = {
      create: (options, salt) => this.ask("create", options, salt),
      get: (options, salt) => this.ask("get", options, salt),
    };
    this.result = run(authenticator);
    const wipe = () => this.secrets.forEach((s) => s.fill(0));
    this.result.then(wipe, wipe);
  }

  private ask(op: AccountPasskeyCeremony["op"], options: Record<string, unknown>, salt: encoding.Bytes): Promise<Answered> {
    if (this.cancelled) return Promise.reject(new InputError(CANCELLED));
    return new Promise<Answered>((resolve, reject) => {
      const ceremony: AccountPasskeyCeremony = {
        id: encoding.toBase64Url(crypto.getRandomValues(new Uint8Array(16))),
        op,
        options,
        prfSalt: encoding.toBase64Url(salt),
      };
      const timer = setTimeout(() => this.refuse(TIMED_OUT), CEREMONY_TIMEOUT_MS);
      this.asked = { ceremony, resolve, reject, timer };
      this.onAsk?.(ceremony);
    });
  }

  /** The next step for the popup: the ceremony waiting, the next one the SDK asks, or the outcome (a failure as the SDK's error). */
  next(): Promise<CeremonyStep<T>> {
    if (this.asked) return Promise.resolve({ ceremony: this.asked.ceremony });
    return new Promise<CeremonyStep<T>>((resolve, reject) => {
      const mine = (ceremony: AccountPasskeyCeremony) => {
        this.onAsk = undefined;
        resolve({ ceremony });
      };
      this.onAsk = mine;
      const stop = () => {
        if (this.onAsk === mine) this.onAsk = undefined;
      };
      this.result.then(
        (done) => {
          stop();
          resolve({ done });
        },
        (err: unknown) => {
          stop();
          reject(err);
        },
      );
    });
  }

  waitsFor(id: string): boolean {
    return this.asked?.ceremony.id === id;
  }

  answer(answer: AccountPasskeyAnswer): Promise<CeremonyStep<T>> {
    const asked = this.asked!;
    this.asked = undefined;
    clearTimeout(asked.timer);
    if ("error" in answer) asked.reject(new InputError(String(answer.error)));
    else if (typeof answer.response !== "object" || answer.response === null)
      asked.reject(new Error("The passkey prompt answered no credential."));
    else {
      const prf = typeof answer.prf === "string" ? encoding.fromBase64Url(answer.prf) : undefined;
      if (prf) this.secrets.push(prf);
      asked.resolve({ response: answer.response, ...(prf && { prf }) });
    }
    // The SDK goes on after this returns (a promise's continuation): its next ceremony, if any, finds the popup's request waiting.
    return this.next();
  }

  refuse(why: string): void {
    this.cancelled = true;
    const asked = this.asked;
    this.asked = undefined;
    if (!asked) return;
    clearTimeout(asked.timer);
    asked.reject(new InputError(why));
  }
}

let current: Flow<unknown> | undefined;

/** Starts a flow (refusing any other waiting) and answers its first step. */
export function startFlow<T>(run: (authenticator: PasskeyAuthenticator) => Promise<T>): Promise<CeremonyStep<T>> {
  current?.refuse(CANCELLED);
  const flow = new Flow(run);
  current = flow as Flow<unknown>;
  return flow.next();
}

/** The popup's answer to the ceremony `id`: answers the flow's next step. */
export function answerCeremony(id: string, answer: AccountPasskeyAnswer): Promise<CeremonyStep<unknown>> {
  if (!current?.waitsFor(id)) throw new Error("No passkey prompt is waiting for this answer: start again.");
  return current.answer(answer);
}

/** Refuses the ceremony waiting, if any: the flow ends with "cancelled". */
export function cancelFlow(): void {
  current?.refuse(CANCELLED);
  current = undefined;
}
