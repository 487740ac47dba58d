/**
 * Passkey sign-in and unlock against a dishonest server: real SDK clients, a passkey authenticator
 * with real signatures and the PRF (test/helpers/passkey-authenticator.ts), the real service behind
 * a proxy that rewrites its answers (test/helpers/dishonest-proxy.ts). The server never sees the PRF
 * output; it cannot turn a PRF unlock into a password prompt, hand over wraps it made or moved, sign
 * the person in as another account, or roll the account back to before a password change on a
 * device that knows it; and a password change does not re-wrap under a kept key it made up.
 */
import { randomUUID } from "node:crypto";
import { SecurityError, VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { SQL_ENGINES } from "../helpers/postgres";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { newDevice } from "../helpers/devices";
import { dishonestSuite, writesIn, type Edit } from "../helpers/dishonest-proxy";
import { TestPasskeyAuthenticator } from "../helpers/passkey-authenticator";

jest.setTimeout(240_000);

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;
const NEW_PASSWORD = "a brand new and long passphrase 7";

/** A refusal by name, with nothing taken up: the client holds no tokens and no keys. */
async function refusedAs(client: VaultClient, attempt: Promise<unknown>, code: string) {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SecurityError);
  expect((err as SecurityError).code).toBe(code);
  expect(client.unlocked).toBe(false);
  expect(client.http.currentTokens).toBeUndefined();
}

describe.each(SQL_ENGINES)("passkey unlock against a dishonest server, on %s", (_engine, openStore) => {
  const suite = dishonestSuite(openStore);
  const through = (device = newDevice()) => new VaultClient({ baseUrl: suite.proxy.url, ...device });
  const onSignIn =
    (change: (body: any) => any): Edit =>
    (method, path, body, status) =>
      method === "POST" && path === "/auth/passkey" && status === 200 ? change(body) : body;

  /** Alice with a passkey that unlocks (and its authenticator), registered through the proxy. */
  async function alice(device = newDevice()) {
    const c = through(device);
    const address = email("alice");
    await c.register({ email: address, password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const authenticator = new TestPasskeyAuthenticator();
    const passkey = await c.accountPasskeys.add({ name: "Laptop", password: SDK_PASSWORD, authenticator });
    return { c, address, authenticator, passkey };
  }

  test("the PRF output never reaches the server, in any request", async () => {
    suite.proxy.sent.length = 0;
    const { authenticator } = await alice();
    await through().loginWithPasskey(authenticator);
    const sent = JSON.stringify(suite.proxy.sent);
    expect(authenticator.prfOutputs.length).toBeGreaterThanOrEqual(2);
    for (const prf of authenticator.prfOutputs) {
      for (const form of [toBase64(prf), Buffer.from(prf).toString("base64url"), Buffer.from(prf).toString("hex")])
        expect(sent).not.toContain(form);
    }
    // The extension's results, where a browser puts the PRF, go out empty.
    const signIn = suite.proxy.sent.find((s) => s.path === "/auth/passkey")!;
    expect(signIn.body.response.clientExtensionResults).toEqual({});
  });

  test("an authenticator that answered the PRF is not turned into a password prompt when the server withholds the wraps", async () => {
    const a = await alice();
    const { authenticator } = a;
    suite.proxy.edit = onSignIn((body) => {
      delete body.passkey.unlock;
      return body;
    });
    const victim = through();
    const before = await a.c.sessions.list();
    await refusedAs(victim, victim.loginWithPasskey(authenticator), "PASSKEY_UNLOCK_WITHHELD");
    await expect(victim.unlockPasskeyLogin(SDK_PASSWORD)).rejects.toThrow(/no passkey sign-in is waiting/);
    // The session the refused sign-in opened is ended, not left open until it expires.
    expect((await a.c.sessions.list()).map((s) => s.sessionId).sort()).toEqual(before.map((s) => s.sessionId).sort());
  });

  test("wraps of another passkey of the same account, or of another account, or made by the server, do not open", async () => {
    const a = await alice();
    const second = new TestPasskeyAuthenticator();
    await a.c.accountPasskeys.add({ name: "Phone", password: SDK_PASSWORD, authenticator: second });
    const bob = await alice();
    // The wraps each sign-in is answered, as the server keeps them.
    const wrapsOf = async (authenticator: TestPasskeyAuthenticator) => {
      let kept: any;
      suite.proxy.edit = onSignIn((body) => ((kept = structuredClone(body.passkey.unlock)), body));
      await through().loginWithPasskey(authenticator);
      suite.proxy.edit = onSignIn((body) => body);
      return kept;
    };
    const phoneWraps = await wrapsOf(second);
    const bobWraps = await wrapsOf(bob.authenticator);
    const made = { prfWrappedKey: toBase64(new Uint8Array(60).fill(7)), wrappedStretchedKey: phoneWraps.wrappedStretchedKey };
    for (const swapped of [
      phoneWraps,
      bobWraps,
      made,
      { ...(await wrapsOf(a.authenticator)), wrappedStretchedKey: phoneWraps.wrappedStretchedKey },
    ]) {
      suite.proxy.edit = onSignIn((body) => ({ ...body, passkey: { ...body.passkey, unlock: swapped } }));
      const victim = through();
      await refusedAs(victim, victim.loginWithPasskey(a.authenticator), "PASSKEY_UNLOCK_MISMATCH");
    }
  });

  test("a sign-in answered for another passkey, or as another account, is refused", async () => {
    const a = await alice();
    // Her other passkey's sign-in answered to this one: the same account, another passkey.
    const phone = new TestPasskeyAuthenticator();
    await a.c.accountPasskeys.add({ name: "Phone", password: SDK_PASSWORD, authenticator: phone });
    let phoneAnswer: any;
    suite.proxy.edit = onSignIn((body) => ((phoneAnswer = structuredClone(body)), body));
    await through().loginWithPasskey(phone);
    suite.proxy.edit = onSignIn(() => phoneAnswer);
    const mine = through();
    await refusedAs(mine, mine.loginWithPasskey(a.authenticator), "PASSKEY_MISMATCH");
    const bob = await alice();
    // Bob's whole sign-in answer handed to alice's passkey: the server signs her in as bob.
    let bobsAnswer: any;
    suite.proxy.edit = onSignIn((body) => ((bobsAnswer = structuredClone(body)), body));
    await through().loginWithPasskey(bob.authenticator);
    suite.proxy.edit = onSignIn(() => bobsAnswer);
    const victim = through();
    await refusedAs(victim, victim.loginWithPasskey(a.authenticator), "PASSKEY_MISMATCH");
    // Her own answer naming bob's account id (and bob's wraps): her passkey holds her id.
    suite.proxy.edit = onSignIn((body) => ({
      ...body,
      userId: bobsAnswer.userId,
      passkey: { ...bobsAnswer.passkey, credentialId: body.passkey.credentialId },
    }));
    await refusedAs(victim, victim.loginWithPasskey(a.authenticator), "PASSKEY_MISMATCH");
  });

  test("the account as it was before a password change, replayed to a device that knows it, is refused", async () => {
    const device = newDevice();
    const a = await alice(device);
    // The server keeps the sign-in answer of before the change (old KDF, old keys sealed under the old password, the old wraps).
    let before: any;
    suite.proxy.edit = onSignIn((body) => ((before = structuredClone(body)), body));
    await through(device).loginWithPasskey(a.authenticator);
    suite.proxy.edit = onSignIn((body) => body);
    await a.c.changePassword(SDK_PASSWORD, NEW_PASSWORD);
    // This device signed in after the change: it knows the new parameters.
    expect((await through(device).loginWithPasskey(a.authenticator)).unlocked).toBe(true);
    suite.proxy.edit = onSignIn((body) => ({
      ...before,
      accessToken: body.accessToken,
      refreshToken: body.refreshToken,
      sessionId: body.sessionId,
    }));
    const victim = through(device);
    await refusedAs(victim, victim.loginWithPasskey(a.authenticator), "KDF_CHANGED");
    // The old wraps under the account as it is now: bound to the account version they were made at.
    suite.proxy.edit = onSignIn((body) => ({ ...body, passkey: { ...body.passkey, unlock: before.passkey.unlock } }));
    await refusedAs(victim, victim.loginWithPasskey(a.authenticator), "PASSKEY_UNLOCK_MISMATCH");
  });

  test("a password change refuses to re-wrap under a kept key the server made up, and sends nothing", async () => {
    const a = await alice();
    suite.proxy.edit = (method, path, body) =>
      method === "GET" && path === "/users/me/passkeys"
        ? { ...body, passkeys: body.passkeys.map((p: any) => ({ ...p, keptWrappedKey: toBase64(new Uint8Array(60).fill(9)) })) }
        : body;
    suite.proxy.sent.length = 0;
    const err = await a.c.changePassword(SDK_PASSWORD, NEW_PASSWORD).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecurityError);
    expect((err as SecurityError).code).toBe("PASSKEY_UNLOCK_MISMATCH");
    expect(writesIn(suite.proxy.sent).filter((s) => s.path === "/users/me/password")).toEqual([]);
  });

  test("kept wraps swapped between two passkeys of the account: the password change refuses, and both still unlock after", async () => {
    const a = await alice();
    const phone = new TestPasskeyAuthenticator();
    await a.c.accountPasskeys.add({ name: "Phone", password: SDK_PASSWORD, authenticator: phone });
    suite.proxy.edit = (method, path, body) => {
      if (method !== "GET" || path !== "/users/me/passkeys") return body;
      const [x, y] = body.passkeys;
      return {
        ...body,
        passkeys: [
          { ...x, keptWrappedKey: y.keptWrappedKey },
          { ...y, keptWrappedKey: x.keptWrappedKey },
        ],
      };
    };
    const err = await a.c.changePassword(SDK_PASSWORD, NEW_PASSWORD).catch((e: unknown) => e);
    expect((err as SecurityError).code).toBe("PASSKEY_UNLOCK_MISMATCH");
    suite.proxy.edit = (_m, _p, body) => body;
    for (const authenticator of [a.authenticator, phone]) expect((await through().loginWithPasskey(authenticator)).unlocked).toBe(true);
  });

  test("the server's options cannot lower what the authenticator is asked: user verification, a discoverable credential, the fixed PRF salt", async () => {
    const c = through();
    await c.register({ email: email("carol"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    suite.proxy.edit = (method, path, body) =>
      method === "POST" && (path === "/users/me/passkeys/options" || path === "/auth/passkey/challenge")
        ? {
            ...body,
            options: {
              ...body.options,
              authenticatorSelection: { residentKey: "discouraged", userVerification: "discouraged" },
              userVerification: "discouraged",
            },
          }
        : body;
    const asked: Array<{ options: any; salt: Uint8Array }> = [];
    const inner = new TestPasskeyAuthenticator();
    const spy = {
      create: (options: any, salt: Uint8Array) => (asked.push({ options, salt }), inner.create(options, salt)),
      get: (options: any, salt: Uint8Array) => (asked.push({ options, salt }), inner.get(options, salt)),
    };
    await c.accountPasskeys.add({ name: "Laptop", password: SDK_PASSWORD, authenticator: spy });
    await through().loginWithPasskey(spy);
    expect(asked[0]!.options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    expect(asked[asked.length - 1]!.options.userVerification).toBe("required");
    const salts = new Set(asked.map((a) => Buffer.from(a.salt).toString("hex")));
    expect(salts.size).toBe(1);
  });
});
