/**
 * Passkeys that sign in, and with the PRF unlock, over HTTP on SQLite and PostgreSQL: real SDK
 * clients, a software passkey authenticator with real ES256 signatures and the PRF
 * (test/helpers/passkey-authenticator.ts), the server as it runs. A passkey registered on one device
 * signs in and unlocks on another, before and after a password change and a key rotation; one
 * without the PRF signs in and waits for the master password; the organization's policy forbids or
 * requires them; a password change from a client that does not re-wrap them is refused.
 */
import { randomUUID } from "node:crypto";
import { VaultClient, UnlockError } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { startTestServer, type TestServer } from "../helpers/server";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { TestPasskeyAuthenticator } from "../helpers/passkey-authenticator";
import { Api } from "../helpers/client";
import { SoftKey } from "../helpers/webauthn";
import { newDevice } from "../helpers/devices";
import { deriveAccountSecrets } from "../../protocol/crypto/keys";

jest.setTimeout(240_000);

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;
const NEW_PASSWORD = "a brand new and long passphrase 7";

describe.each(SQL_ENGINES)("passkeys that sign in and unlock, on %s", (_engine, openStore) => {
  let server: TestServer;
  let api: Api;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const store = await openStore();
    drop = store.drop;
    server = await startTestServer({ ...store.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  const client = () => new VaultClient({ baseUrl: server.url, ...newDevice() });
  const tokenOf = (c: VaultClient) => c.http.currentTokens!.accessToken;

  /** Alice, owner of a new organization, with a personal vault holding one secret. */
  async function alice() {
    const c = client();
    const address = email("alice");
    await c.register({ email: address, password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const vault = await c.vaults.create("Private", "personal");
    await c.items.add(vault.vaultId, { name: "Router", fields: { password: "hunter2" } });
    return { c, address, vaultId: vault.vaultId };
  }

  /** A new device signs in with the passkey: unlocked, it reads the personal vault's secret (under the stretched key the passkey opened). */
  async function signsInAndReads(authenticator: TestPasskeyAuthenticator, address: string, vaultId: string) {
    const other = client();
    const result = await other.loginWithPasskey(authenticator);
    expect(result.unlocked).toBe(true);
    expect(other.account.email).toBe(address);
    const items = await other.items.list(vaultId);
    expect(items.map((i) => [i.name, i.fields.password])).toEqual([["Router", "hunter2"]]);
    return other;
  }

  test("a passkey with the PRF signs in and unlocks on another device, before and after a password change and a key rotation", async () => {
    const { c, address, vaultId } = await alice();
    const authenticator = new TestPasskeyAuthenticator();
    const added = await c.accountPasskeys.add({ name: "Laptop", password: SDK_PASSWORD, authenticator });
    expect(added).toMatchObject({ name: "Laptop", unlock: true });
    await signsInAndReads(authenticator, address, vaultId);

    await c.changePassword(SDK_PASSWORD, NEW_PASSWORD);
    await signsInAndReads(authenticator, address, vaultId);
    // The new password unlocks what the passkey's sign-in opened: the same account state.
    const byPassword = client();
    await byPassword.login(address, NEW_PASSWORD);

    const rotated = await c.keys.rotate();
    const after = await signsInAndReads(authenticator, address, vaultId);
    expect(await after.keys.own()).toBe(rotated.fingerprint);

    // Its counter moved on at every sign-in.
    expect(authenticator.passkeys[0]!.counter).toBe(3);
    const { passkeys } = await c.accountPasskeys.list();
    expect(passkeys).toEqual([expect.objectContaining({ credentialId: added.credentialId, unlock: true, lastUsedAt: expect.any(String) })]);
  });

  test("an authenticator that answers the PRF only at sign-in is asked once more at registration, and unlocks", async () => {
    const { c, address, vaultId } = await alice();
    const authenticator = new TestPasskeyAuthenticator({ prfAtCreate: false });
    expect(await c.accountPasskeys.add({ name: "Key", password: SDK_PASSWORD, authenticator })).toMatchObject({ unlock: true });
    await signsInAndReads(authenticator, address, vaultId);
  });

  test("a passkey without the PRF signs in and waits for the master password; a wrong one is tried again", async () => {
    const { c, address, vaultId } = await alice();
    const authenticator = new TestPasskeyAuthenticator({ prf: false });
    expect(await c.accountPasskeys.add({ name: "Old key", password: SDK_PASSWORD, authenticator })).toMatchObject({ unlock: false });
    const other = client();
    expect(await other.loginWithPasskey(authenticator)).toEqual({ unlocked: false, email: address });
    expect(other.unlocked).toBe(false);
    await expect(other.unlockPasskeyLogin("not the password at all")).rejects.toBeInstanceOf(UnlockError);
    const account = await other.unlockPasskeyLogin(SDK_PASSWORD);
    expect(account.email).toBe(address);
    expect((await other.items.list(vaultId)).map((i) => i.name)).toEqual(["Router"]);
    // Given up at the password prompt: the session the passkey opened ends on the server too.
    const before = (await c.sessions.list()).length;
    const gaveUp = client();
    expect((await gaveUp.loginWithPasskey(authenticator)).unlocked).toBe(false);
    expect(await c.sessions.list()).toHaveLength(before + 1);
    await gaveUp.cancelPasskeyLogin();
    expect(await c.sessions.list()).toHaveLength(before);
    await expect(gaveUp.unlockPasskeyLogin(SDK_PASSWORD)).rejects.toThrow(/no passkey sign-in is waiting/);
  });

  test("registering takes the master password, a verified user and a fresh setup; a removed passkey signs in no more", async () => {
    const { c } = await alice();
    const token = tokenOf(c);
    await expect(
      c.accountPasskeys.add({ name: "X", password: "wrong password entirely", authenticator: new TestPasskeyAuthenticator() }),
    ).rejects.toMatchObject({
      status: 403,
    });
    // A security key that does not verify its user (UP only) is not a passkey that signs in.
    const setup = await api.post("/users/me/passkeys/options", { token });
    expect(setup.status).toBe(200);
    expect(setup.body.options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    const key = new SoftKey();
    const noUv = await api.post("/users/me/passkeys", {
      token,
      body: {
        name: "Key",
        setupToken: setup.body.setupToken,
        response: key.register(setup.body.options),
        currentAuthHash: await authHashOf(c),
      },
    });
    expect([noUv.status, noUv.body.error.field]).toEqual([400, "response"]);

    const authenticator = new TestPasskeyAuthenticator();
    const added = await c.accountPasskeys.add({ name: "Phone", password: SDK_PASSWORD, authenticator });
    // One credential signs in once: registering it again is refused by the authenticator's exclusion, and by the server.
    await c.accountPasskeys.remove(added.credentialId);
    expect((await c.accountPasskeys.list()).passkeys).toEqual([]);
    await expect(client().loginWithPasskey(authenticator)).rejects.toMatchObject({ status: 401 });
  });

  test("a password change or rotation that does not re-wrap every passkey that unlocks is refused, and changes nothing", async () => {
    const { c, address, vaultId } = await alice();
    const authenticator = new TestPasskeyAuthenticator();
    await c.accountPasskeys.add({ name: "Laptop", password: SDK_PASSWORD, authenticator });
    // A client from before passkey unlock: its change names no passkeys.
    const before = await c.me();
    const dropPasskeys = (body: any) => {
      delete body.passkeys;
      return body;
    };
    const plain = new VaultClient({ baseUrl: server.url, ...newDevice(), fetch: rewritingFetch("/users/me/password", dropPasskeys) });
    await plain.login(address, SDK_PASSWORD);
    await expect(plain.changePassword(SDK_PASSWORD, NEW_PASSWORD)).rejects.toMatchObject({ status: 409, field: "passkeys" });
    const rotating = new VaultClient({ baseUrl: server.url, ...newDevice(), fetch: rewritingFetch("/users/me/keys", dropPasskeys) });
    await rotating.login(address, SDK_PASSWORD);
    await expect(rotating.keys.rotate()).rejects.toMatchObject({ status: 409, field: "passkeys" });
    expect((await c.me()).accountVersion).toBe(before.accountVersion);
    await signsInAndReads(authenticator, address, vaultId);
  });

  test("a passkey's unlock wrapped before a password change is refused when it arrives after it", async () => {
    const { c, address } = await alice();
    const options = await api.post("/users/me/passkeys/options", { token: tokenOf(c) });
    const stale = { prfWrappedKey: "AAAA", wrappedStretchedKey: "AAAA", keptWrappedKey: "AAAA", accountVersion: 1 };
    const other = client();
    await other.login(address, SDK_PASSWORD);
    await other.changePassword(SDK_PASSWORD, NEW_PASSWORD);
    const fresh = client();
    await fresh.login(address, NEW_PASSWORD);
    const authenticator = new TestPasskeyAuthenticator();
    const made = await authenticator.create(options.body.options, new Uint8Array(32));
    const late = await api.post("/users/me/passkeys", {
      token: tokenOf(fresh),
      body: {
        name: "Late",
        setupToken: options.body.setupToken,
        response: { ...made.response, clientExtensionResults: {} },
        currentAuthHash: await authHashOf(fresh, NEW_PASSWORD),
        unlock: stale,
      },
    });
    expect([late.status, late.body.error?.field]).toEqual([409, "accountVersion"]);
    expect((await fresh.accountPasskeys.list()).passkeys).toEqual([]);
  });

  test("the organization's policy forbids passkeys, or requires them of a member who has one", async () => {
    const { c, address } = await alice();
    const authenticator = new TestPasskeyAuthenticator();
    await c.accountPasskeys.add({ name: "Laptop", password: SDK_PASSWORD, authenticator });
    const orgId = c.account.orgId;
    const setPolicy = (passkeySignIn: string) =>
      api.put(`/orgs/${orgId}/policies`, { token: tokenOf(c), body: { requireSecondFactor: false, passkeySignIn } });

    expect((await setPolicy("forbidden")).body).toMatchObject({
      passkeySignIn: "forbidden",
      enforced: expect.arrayContaining(["passkeySignIn"]),
    });
    await expect(client().loginWithPasskey(authenticator)).rejects.toMatchObject({ status: 403 });
    // A client from before the policy, changing another one, leaves it as it is.
    const older = await api.put(`/orgs/${orgId}/policies`, {
      token: tokenOf(c),
      body: { requireSecondFactor: false, recoveryMinThreshold: 3 },
    });
    expect(older.body).toMatchObject({ passkeySignIn: "forbidden", recoveryMinThreshold: 3 });
    await expect(
      c.accountPasskeys.add({ name: "Another", password: SDK_PASSWORD, authenticator: new TestPasskeyAuthenticator() }),
    ).rejects.toMatchObject({
      status: 403,
    });

    expect((await setPolicy("required")).status).toBe(200);
    await expect(client().login(address, SDK_PASSWORD)).rejects.toMatchObject({ status: 403 });
    expect((await client().loginWithPasskey(authenticator)).unlocked).toBe(true);
    // A member without one signs in with the password, to register one.
    const bobAddress = email("bob");
    const { code } = await c.invites.create(bobAddress);
    const bob = client();
    await bob.register({ email: bobAddress, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
    await client().login(bobAddress, SDK_PASSWORD);
    expect((await bob.accountPasskeys.list()).policy).toBe("required");
  });

  /** The auth hash of the client's account password (the proof a registration carries). */
  async function authHashOf(c: VaultClient, password = SDK_PASSWORD): Promise<string> {
    return Buffer.from((await deriveAccountSecrets(password, c.account.kdf)).authHash).toString("base64");
  }
});

/** A fetch that rewrites the JSON body of requests to one path (a client from before a change to it). */
function rewritingFetch(path: string, rewrite: (body: any) => any): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (new URL(url).pathname.endsWith(path) && typeof init?.body === "string")
      init = { ...init, body: JSON.stringify(rewrite(JSON.parse(init.body))) };
    return fetch(input, init);
  }) as typeof fetch;
}
