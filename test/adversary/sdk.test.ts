/**
 * A dishonest server against the real SDK: a proxy between real clients and the real
 * service rewrites the service's genuine answers (test/helpers/dishonest-proxy.ts), and each attack
 * is refused by the SDK with a named error; the victim sends nothing derived from the password or
 * a key, and the service's state does not change. On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import {
  createAccountKeys,
  MemoryPinStore,
  MemoryRosterHeadStore,
  MemoryValues,
  VaultClient,
  type InviteSecret,
  type RememberedKdf,
  type RosterHeadStore,
} from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { openAccountKeys } from "../../protocol/crypto/keys";
import { kdfStatementBytes, keyStatementBytes, signStatement } from "../../protocol/formats/statements";
import { Api, registerUser, sharedVaultBody, type TestUser } from "../helpers/client";
import {
  colluderAs,
  honest,
  startDishonestProxy,
  swapVaultNames,
  writesIn,
  type DishonestProxy,
  type Edit,
} from "../helpers/dishonest-proxy";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { fingerprintOf } from "../helpers/roster";
import { plainShare, TEST_KDF, unsignedVault } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { keyStatementOf } from "../helpers/statements";
import { sleep } from "../helpers/wait";

jest.setTimeout(120_000);

const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** The public keys of a registration, as a key lookup shows them. */
const publicPart = ({ publicKey, signingPublicKey, publicKeySignature }: Record<string, any>) => ({
  publicKey,
  signingPublicKey,
  publicKeySignature,
});

/** What one device remembers: pins, roster heads, KDF parameters, invite secrets. */
function newDevice() {
  return {
    pins: new MemoryPinStore(),
    rosterHeads: new MemoryRosterHeadStore(),
    kdfMemory: new MemoryValues<RememberedKdf>(),
    inviteSecrets: new MemoryValues<InviteSecret>(),
  };
}
type Device = ReturnType<typeof newDevice>;

describe.each(SQL_ENGINES)("a dishonest server against the SDK, on %s", (_engine, openStore) => {
  let store: ServerStore;
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;
  let alice: VaultClient, bob: VaultClient, carol: VaultClient;
  let eve: TestUser;
  const aliceDevice = newDevice();

  /** A client on `device` that talks to the service through the proxy. */
  const through = (device: Device = newDevice()) => new VaultClient({ baseUrl: proxy.url, ...device });
  /** Alice on her own device (the pins, heads, KDF parameters and invite secrets her sessions left), logged in afresh. */
  async function aliceAgain(): Promise<VaultClient> {
    const c = through(aliceDevice);
    await c.login(alice.account.email, PASSWORD);
    return c;
  }
  /** Requests that carry what the password derives. */
  const derivedFromPassword = (from: number) =>
    proxy.sent.slice(from).filter((s) => s.method === "POST" && (s.path === "/auth/login" || s.path === "/auth/register"));
  /** Requests that would change the service (logins and token refreshes aside). */
  const changes = (from: number) => writesIn(proxy.sent.slice(from)).filter((s) => !s.path.startsWith("/auth/"));

  /** What the service holds of a vault, read honestly (not through the proxy). */
  async function stateOf(vaultId: string) {
    const token = { token: alice.http.currentTokens!.accessToken };
    const [vault, members, items, roster] = await Promise.all([
      api.get(`/vaults/${vaultId}`, token),
      api.get(`/vaults/${vaultId}/members`, token),
      api.get(`/vaults/${vaultId}/items`, token),
      api.get(`/vaults/${vaultId}/roster`, token),
    ]);
    return { vault: vault.body, members: members.body, items: items.body, roster: roster.body };
  }

  /** Runs `attack` (expected to be refused with `code`), then checks nothing was sent that changes `vaultId`, and that it did not change. */
  async function refusedWithoutChange(vaultId: string, code: string, attack: () => Promise<unknown>): Promise<void> {
    const before = await stateOf(vaultId);
    const from = proxy.sent.length;
    await expect(attack()).rejects.toMatchObject({ name: "SecurityError", code });
    expect(changes(from)).toEqual([]);
    expect(await stateOf(vaultId)).toEqual(before);
  }

  beforeAll(async () => {
    store = await openStore();
    server = await startTestServer(store.env);
    api = new Api(server.url);
    proxy = await startDishonestProxy(new URL(server.url).origin);
    alice = through(aliceDevice);
    await alice.register({ email: email("alice"), password: PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    // Bob and carol accept alice's invite links; eve colludes with the server: a plain client whose
    // keys this test holds, invited by a bare token.
    const bobEmail = email("bob");
    bob = through();
    await bob.register({
      email: bobEmail,
      password: PASSWORD,
      invite: (await alice.invites.create(bobEmail)).link,
      kdf: TEST_KDF,
      rsaBits: 2048,
    });
    const carolEmail = email("carol");
    carol = through();
    await carol.register({
      email: carolEmail,
      password: PASSWORD,
      invite: (await alice.invites.create(carolEmail, "admin")).code,
      kdf: TEST_KDF,
      rsaBits: 2048,
    });
    const eveEmail = email("eve");
    const plain = await api.post("/invites", { token: alice.http.currentTokens!.accessToken, body: { email: eveEmail, role: "member" } });
    eve = await registerUser(api, { inviteToken: plain.body.token, email: eveEmail });
  });
  afterEach(() => {
    proxy.edit = honest;
  });
  afterAll(async () => {
    await proxy.close();
    await server.stop();
    await store.drop();
  });

  test("1. a KDF downgrade at login: refused before anything is derived, on a new device and on one that logged in before", async () => {
    const prelogin =
      (replace: (kdf: any) => any): Edit =>
      (method, path, body) =>
        method === "GET" && path === "/auth/prelogin" ? { ...body, kdf: replace(body.kdf) } : body;
    const registered = alice.account.kdf;
    const downgrades: Array<[string, (kdf: any) => any, string]> = [
      ["PBKDF2 with 1 iteration", (k) => ({ algorithm: "pbkdf2-sha256", salt: k.salt, iterations: 1 }), "KDF_TOO_WEAK"],
      ["PBKDF2 one iteration below its floor", (k) => ({ ...k, iterations: 599_999 }), "KDF_TOO_WEAK"],
      [
        "Argon2id over 8 KiB",
        (k) => ({ algorithm: "argon2id", salt: k.salt, iterations: 3, memoryKiB: 8, parallelism: 1 }),
        "KDF_TOO_WEAK",
      ],
      [
        "Argon2id at the contract's floor",
        (k) => ({ algorithm: "argon2id", salt: k.salt, iterations: 2, memoryKiB: 19456, parallelism: 1 }),
        "KDF_TOO_WEAK",
      ],
      [
        "Argon2id over 64 GiB (a client stopped)",
        (k) => ({ algorithm: "argon2id", salt: k.salt, iterations: 3, memoryKiB: 64 * 1048576, parallelism: 4 }),
        "KDF_UNSUPPORTED",
      ],
      ["a salt of 1 byte", (k) => ({ ...k, salt: "AA==" }), "KDF_UNSUPPORTED"],
    ];
    // A new device refuses them as below the floor (or beyond the caps); alice's, which logged in
    // before, as not the parameters it remembers.
    for (const [what, replace, code] of downgrades) {
      for (const [device, expected] of [
        [newDevice(), code],
        [aliceDevice, "KDF_CHANGED"],
      ] as const) {
        proxy.edit = prelogin(replace);
        const from = proxy.sent.length;
        await expect(through(device).login(alice.account.email, PASSWORD)).rejects.toMatchObject({ name: "SecurityError", code: expected });
        expect([what, derivedFromPassword(from)]).toEqual([what, []]);
      }
    }
    // The registered cost with a salt the server chose, or another algorithm: a device that logged
    // in before remembers the account's parameters and salt.
    for (const [what, replace] of [
      ["a salt the server chose", (k: any) => ({ ...k, salt: toBase64(new Uint8Array(16).fill(7)) })],
      [
        "Argon2id at the SDK's default",
        (k: any) => ({ algorithm: "argon2id", salt: k.salt, iterations: 3, memoryKiB: 65536, parallelism: 4 }),
      ],
    ] as const) {
      proxy.edit = prelogin(replace);
      const from = proxy.sent.length;
      await expect(through(aliceDevice).login(alice.account.email, PASSWORD)).rejects.toMatchObject({
        code: "KDF_CHANGED",
        message: expect.stringContaining("nothing was derived or sent"),
      });
      expect([what, derivedFromPassword(from)]).toEqual([what, []]);
    }
    // A change the account's own key signed, in a newer statement, is followed: the device derives
    // with it (the service, which never changed them, then refuses the hash). A replayed, stale or
    // forged statement is not.
    const signing = (await openAccountKeys(alice.exportStretchedKey(), alice.account)).signingPrivateKey;
    const stronger = { ...registered, iterations: 700_000 };
    const statement = (version: number, kdf = stronger) =>
      signStatement(kdfStatementBytes({ userId: alice.account.userId, email: alice.account.email, kdf, version }), signing);
    const answering =
      (version: number, signature: string): Edit =>
      (method, path, body) =>
        method === "GET" && path === "/auth/prelogin" ? { kdf: stronger, kdfStatement: { version, signature } } : body;
    for (const [version, signature] of [
      [1, await statement(1)],
      [2, await statement(2, registered)],
      [2, toBase64(new Uint8Array(64).fill(1))],
    ] as const) {
      proxy.edit = answering(version, signature);
      const from = proxy.sent.length;
      await expect(through(aliceDevice).login(alice.account.email, PASSWORD)).rejects.toMatchObject({ code: "KDF_CHANGED" });
      expect(derivedFromPassword(from)).toEqual([]);
    }
    proxy.edit = answering(2, await statement(2));
    const signedFrom = proxy.sent.length;
    await expect(through(aliceDevice).login(alice.account.email, PASSWORD)).rejects.toMatchObject({ status: 401 });
    expect(derivedFromPassword(signedFrom)).toHaveLength(1);
    // The device still remembers the registered parameters, and logs in with them.
    proxy.edit = honest;
    await expect(through(aliceDevice).login(alice.account.email, PASSWORD)).resolves.toMatchObject({ userId: alice.account.userId });
    // A login answer naming other parameters than prelogin's: the session is not taken up.
    proxy.edit = (method, path, body) => (method === "POST" && path === "/auth/login" ? { ...body, kdf: stronger } : body);
    await expect(through(aliceDevice).login(alice.account.email, PASSWORD)).rejects.toMatchObject({ code: "KDF_CHANGED" });
    // A device that never saw the account trusts the salt it is given (the limit the README
    // states): it derives, at no less than the floor.
    proxy.edit = prelogin((k) => ({ ...k, salt: toBase64(new Uint8Array(16).fill(9)) }));
    const fresh = proxy.sent.length;
    await expect(through(newDevice()).login(alice.account.email, PASSWORD)).rejects.toMatchObject({ status: 401 });
    expect(derivedFromPassword(fresh)).toHaveLength(1);
  });

  test("2. sharing by email with a pinned colleague, paired by the server with a colluder's id and keys: refused", async () => {
    const team = await alice.vaults.create("Team 2", "shared");
    await alice.members.share(team.vaultId, bob.account.userId);
    await alice.members.remove(team.vaultId, bob.account.userId);
    await alice.vaults.rekey(team.vaultId);
    // Alice's device pinned bob (id, email, keys) when she invited him and shared with him.
    const bobEmail = bob.account.email;
    const asEve = (statement: unknown) => colluderAs(bob.account, eve, statement);
    // Eve's own statement names her own email: it does not verify for bob's.
    proxy.edit = asEve(keyStatementOf(eve));
    await refusedWithoutChange(team.vaultId, "IDENTITY_MISMATCH", async () => {
      const who = await alice.people.find(bobEmail);
      await alice.members.share(team.vaultId, who.userId);
    });
    // Eve signs a statement that names bob's email with her id: self-consistent, but alice's device
    // pinned bob's email to bob's id.
    const forged = keyStatementOf({ ...eve, email: bobEmail });
    proxy.edit = asEve(forged);
    await refusedWithoutChange(team.vaultId, "IDENTITY_MISMATCH", async () => {
      const who = await alice.people.find(bobEmail);
      await alice.members.share(team.vaultId, who.userId);
    });
    // A device that never saw bob but made his invite: the MAC bob registered with vouches for bob's
    // keys only. (A device with neither trusts the first keys it sees: the README's limit.)
    const inviterOnly = through({ ...newDevice(), inviteSecrets: aliceDevice.inviteSecrets });
    await inviterOnly.login(alice.account.email, PASSWORD);
    await refusedWithoutChange(team.vaultId, "INVITE_BINDING_MISMATCH", async () => {
      const who = await inviterOnly.people.find(bobEmail);
      await inviterOnly.members.share(team.vaultId, who.userId);
    });
    // Honestly, the same device finds bob vouched for by the invite.
    proxy.edit = honest;
    await expect(inviterOnly.people.find(bobEmail)).resolves.toMatchObject({ userId: bob.account.userId, trust: "invite" });
  });

  test("3. vault names swapped by the server: each vault keeps the name its roster signed, and nothing is written to a misnamed one", async () => {
    const priv = await alice.vaults.create("Private", "personal");
    const team = await alice.vaults.create("Team 3", "shared");
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    proxy.edit = swapVaultNames({ vaultId: priv.vaultId, name: "Private" }, { vaultId: team.vaultId, name: "Team 3" });
    const victim = await aliceAgain();
    const listed = await victim.vaults.listChecked();
    const shownAsPrivate = listed.find((v) => v.vaultName === "Private")!;
    expect(shownAsPrivate.vaultId).toBe(team.vaultId);
    expect(shownAsPrivate.nameCheck).toEqual({ status: "mismatch", name: "Team 3", shown: "Private" });
    expect(listed.find((v) => v.vaultId === priv.vaultId)!.nameCheck).toEqual({ status: "mismatch", name: "Private", shown: "Team 3" });
    // The secret meant for "Private" is not written into the team vault the server calls so, nor anywhere.
    await refusedWithoutChange(team.vaultId, "NAME_MISMATCH", () =>
      victim.items.add(shownAsPrivate.vaultId, { name: "Bank", fields: { pin: "4321" } }),
    );
    await refusedWithoutChange(priv.vaultId, "NAME_MISMATCH", () =>
      victim.items.add(priv.vaultId, { name: "Bank", fields: { pin: "4321" } }),
    );
    expect((await victim.vaults.verify(team.vaultId)).problems.join()).toMatch(
      /the server calls the vault "Private", its signed roster "Team 3"/,
    );
    proxy.edit = honest;
    await expect(victim.items.add(priv.vaultId, { name: "Bank", fields: { pin: "4321" } })).resolves.toMatchObject({ name: "Bank" });
  });

  test("4. the rekey hidden from the member who removed someone: no item written or share made under the key the removed member holds", async () => {
    const team = await alice.vaults.create("Team 4", "shared");
    await alice.members.share(team.vaultId, bob.account.userId);
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    const { rekeyRequired } = await alice.members.remove(team.vaultId, bob.account.userId);
    expect(rekeyRequired).toBe(true);
    // The server says no rekey is due...
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}` ? { ...body, rekeyRequired: false } : body;
    const victim = await aliceAgain();
    await refusedWithoutChange(team.vaultId, "REKEY_REQUIRED", () => victim.items.add(team.vaultId, { name: "new", fields: { pw: "1" } }));
    await refusedWithoutChange(team.vaultId, "REKEY_REQUIRED", () => victim.members.share(team.vaultId, eve.userId));
    // ...and hides the removal from the roster as well: the device saw it.
    proxy.edit = (method, path, body) => {
      if (method === "GET" && path === `/vaults/${team.vaultId}`) return { ...body, rekeyRequired: false };
      if (method === "GET" && path === `/vaults/${team.vaultId}/roster`) return { links: body.links.slice(0, -1) };
      return body;
    };
    await refusedWithoutChange(team.vaultId, "ROSTER_ROLLBACK", () => victim.items.add(team.vaultId, { name: "new", fields: { pw: "1" } }));
    proxy.edit = honest;
    await victim.vaults.rekey(team.vaultId);
    await expect(victim.items.add(team.vaultId, { name: "new", fields: { pw: "1" } })).resolves.toMatchObject({ name: "new" });
  });

  test("5. adopting a vault made without a roster: a member the server injected (with a genuine wrap moved from another vault), a role or a name other than the owner confirmed, are refused, and no key is wrapped for anyone", async () => {
    const old = await unsignedVault(alice, "Old");
    await plainShare(alice, old, carol.account.userId, "admin");
    // Eve's genuine wrap, signed by her, from a vault of her own.
    const evesVault = await api.post("/vaults", { token: eve.token, body: sharedVaultBody(Buffer.alloc(32, 5), eve) });
    const evesEntry = (await api.get(`/vaults/${evesVault.body.vaultId}/members`, { token: eve.token })).body.members[0];
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${old.vaultId}/members`
        ? { members: [...body.members, { ...evesEntry, vaultId: old.vaultId, vaultName: "Old", role: "admin" }] }
        : body;
    const victim = await aliceAgain();
    const oldMembers = [
      { userId: alice.account.userId, role: "owner" as const },
      { userId: carol.account.userId, role: "admin" as const },
    ];
    // Alice confirms the two members she knows of: the list the server shows is not that, and it names eve.
    await refusedWithoutChange(old.vaultId, "MEMBER_LIST_MISMATCH", () => victim.members.adoptRoster(old.vaultId, { members: oldMembers }));
    await expect(victim.members.adoptRoster(old.vaultId, { members: oldMembers })).rejects.toMatchObject({
      userId: eve.userId,
    });
    // The members she confirmed, but carol listed as an owner by now: the adopt link would sign that role.
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${old.vaultId}/members`
        ? { members: body.members.map((m: any) => (m.userId === carol.account.userId ? { ...m, role: "owner" } : m)) }
        : body;
    await refusedWithoutChange(old.vaultId, "MEMBER_LIST_MISMATCH", () => victim.members.adoptRoster(old.vaultId, { members: oldMembers }));
    // The name she confirms is the one the adopt link signs: the server showing another is refused.
    proxy.edit = (method, path, body) => (method === "GET" && path === `/vaults/${old.vaultId}` ? { ...body, vaultName: "Payroll" } : body);
    await refusedWithoutChange(old.vaultId, "NAME_MISMATCH", () =>
      victim.members.adoptRoster(old.vaultId, { members: oldMembers, name: "Old" }),
    );
    proxy.edit = honest;
    const adopted = await victim.members.adoptRoster(old.vaultId, { members: oldMembers, name: "Old" });
    expect([...adopted.state.members.keys()].sort()).toEqual([alice.account.userId, carol.account.userId].sort());
    expect(await victim.vaults.verify(old.vaultId)).toMatchObject({ ok: true, roster: { seq: 0 } });
    expect((await victim.vaults.getChecked(old.vaultId)).nameCheck).toEqual({ status: "verified", name: "Old" });
  });

  test("6. an item asked for, answered with another item's record or ciphertext: refused", async () => {
    const team = await alice.vaults.create("Team 6", "shared");
    const a = await alice.items.add(team.vaultId, { name: "A", fields: { password: "a-secret" } });
    const b = await alice.items.add(team.vaultId, { name: "B", fields: { password: "b-secret" } });
    const recordOf = async (itemId: string) =>
      (await api.get(`/vaults/${team.vaultId}/items/${itemId}`, { token: alice.http.currentTokens!.accessToken })).body;
    const bRecord = await recordOf(b.itemId);
    const victim = await aliceAgain();
    proxy.edit = (method, path, body) => (method === "GET" && path === `/vaults/${team.vaultId}/items/${a.itemId}` ? bRecord : body);
    await refusedWithoutChange(team.vaultId, "ITEM_MISMATCH", () => victim.items.get(team.vaultId, a.itemId));
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}/items/${a.itemId}`
        ? { ...body, encryptedData: bRecord.encryptedData, encryptedName: bRecord.encryptedName }
        : body;
    // Caught by the signed item log (its digest of a's ciphertext) before anything is decrypted; the associated data would refuse it too (sdk.e2e).
    await refusedWithoutChange(team.vaultId, "ITEM_HASH_MISMATCH", () => victim.items.get(team.vaultId, a.itemId));
    // One item's record listed twice (in this device's delta read: the list is held from its first read).
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}/items` ? { ...body, items: [bRecord, bRecord, ...body.items] } : body;
    await refusedWithoutChange(team.vaultId, "ITEM_MISMATCH", () => victim.items.list(team.vaultId));
    proxy.edit = honest;
    await expect(victim.items.get(team.vaultId, a.itemId)).resolves.toMatchObject({ name: "A", fields: { password: "a-secret" } });
  });

  test("7. an invite preview that names another organization, role or inviter than the inviter signed: refused before registering", async () => {
    const danEmail = email("dan");
    const { link, inviteId } = await alice.invites.create(danEmail, "member");
    const other = await alice.invites.create(email("dan-admin"), "admin");
    const otherInvite = (await api.post("/invites/redeem", { body: { token: other.token } })).body;
    expect(otherInvite.inviteStatement).toBeDefined();
    const eveKeys = {
      publicKey: eve.bundle.publicKey,
      signingPublicKey: eve.bundle.signingPublicKey,
      publicKeySignature: eve.bundle.publicKeySignature,
    };
    const lies: Array<[string, (body: any) => any]> = [
      ["another organization's name", (b) => ({ ...b, orgName: "Evil Corp" })],
      ["another organization", (b) => ({ ...b, orgId: randomUUID() })],
      ["another role", (b) => ({ ...b, role: "admin" })],
      ["another inviter's keys", (b) => ({ ...b, inviter: { ...b.inviter, ...eveKeys } })],
      ["no statement", (b) => ({ ...b, inviteStatement: undefined })],
      ["the inviter under another email", (b) => ({ ...b, inviter: { ...b.inviter, email: "ceo@example.test" } })],
      ["another invite the inviter signed (as admin)", () => otherInvite],
    ];
    for (const [what, lie] of lies) {
      proxy.edit = (method, path, body) => (method === "POST" && path === "/invites/redeem" ? lie(body) : body);
      const dan = through();
      const from = proxy.sent.length;
      await expect(dan.invites.redeem(link)).rejects.toMatchObject({ code: "INVITE_MISMATCH" });
      await expect(dan.register({ email: danEmail, password: PASSWORD, invite: link, kdf: TEST_KDF, rsaBits: 2048 })).rejects.toMatchObject(
        {
          code: "INVITE_MISMATCH",
        },
      );
      expect([what, derivedFromPassword(from)]).toEqual([what, []]);
    }
    expect((await alice.invites.list()).map((i) => i.id)).toContain(inviteId);
    // A registration answer that puts dan elsewhere than the invite said: caught, and the session not taken up.
    proxy.edit = (method, path, body) => (method === "POST" && path === "/auth/register" ? { ...body, role: "admin" } : body);
    const dan = through();
    await expect(dan.register({ email: danEmail, password: PASSWORD, invite: link, kdf: TEST_KDF, rsaBits: 2048 })).rejects.toMatchObject({
      code: "INVITE_MISMATCH",
    });
    expect(() => dan.account).toThrow();
  });

  test("8. a signature of one kind presented as another: an RSA key's self-signature as a wrap's, a KDF statement as a key statement", async () => {
    const old = await unsignedVault(alice, "Context");
    const signed = await alice.vaults.create("Context signed", "shared");
    const spki = {
      encryptedVaultKey: alice.account.publicKey,
      wrapSignature: (await api.get(`/users/${alice.account.userId}/keys`, { token: alice.http.currentTokens!.accessToken })).body
        .publicKeySignature,
    };
    const victim = await aliceAgain();
    proxy.edit = (method, path, body) => (method === "GET" && path === `/vaults/${old.vaultId}` ? { ...body, ...spki } : body);
    // The signature verifies over those bytes; their length is not a wrap's, so nothing is unwrapped.
    await refusedWithoutChange(old.vaultId, "TAMPERED", () => victim.items.list(old.vaultId));
    proxy.edit = (method, path, body) => (method === "GET" && path === `/vaults/${signed.vaultId}` ? { ...body, ...spki } : body);
    await refusedWithoutChange(signed.vaultId, "WRAP_MISMATCH", () => victim.items.list(signed.vaultId));
    // Carol's KDF statement signature offered as her key statement.
    const carolSigning = (await openAccountKeys(carol.exportStretchedKey(), carol.account)).signingPrivateKey;
    const kdfSignature = await signStatement(
      kdfStatementBytes({ userId: carol.account.userId, email: carol.account.email, kdf: carol.account.kdf, version: 1 }),
      carolSigning,
    );
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/users/${carol.account.userId}/keys`
        ? { ...body, keyStatement: { version: 1, signature: kdfSignature } }
        : body;
    const fresh = through();
    await fresh.login(alice.account.email, PASSWORD);
    await expect(fresh.keys.of(carol.account.userId)).rejects.toMatchObject({ code: "IDENTITY_MISMATCH" });
    // The real one verifies; and it is not a KDF statement's signature either.
    const real = await signStatement(
      keyStatementBytes({ userId: carol.account.userId, email: carol.account.email, keys: fingerprintOf(carol.account), version: 1 }),
      carolSigning,
    );
    expect(real).not.toBe(kdfSignature);
    proxy.edit = honest;
    await expect(fresh.keys.of(carol.account.userId)).resolves.toMatchObject({ keyStatement: { version: 1, signature: real } });
  });

  test("9. an answer about another id than asked: a user's keys under their id in upper case, another vault's record, the record from before a rekey: refused", async () => {
    const team = await alice.vaults.create("Team 9", "shared");
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    await alice.members.share(team.vaultId, bob.account.userId);
    const victim = await aliceAgain();
    // Keys the server made, under eve's id in upper case (pins are kept by the id's one form) and an address nobody pinned.
    const made = await createAccountKeys("server", { rsaBits: 2048, kdf: { ...TEST_KDF, salt: toBase64(new Uint8Array(16)) } });
    const upper = eve.userId.toUpperCase();
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/users/${eve.userId}/keys`
        ? { userId: upper, email: "someone@example.test", ...publicPart(made.registration), keyStatement: undefined }
        : body;
    await refusedWithoutChange(team.vaultId, "INCONSISTENT", () => victim.members.share(team.vaultId, eve.userId));
    expect(await aliceDevice.pins.get(upper)).toBeUndefined();
    // Another vault's record (one carol also holds), under this vault's signed name.
    const other = await carol.vaults.create("Carol's", "shared");
    await carol.members.share(other.vaultId, alice.account.userId, "admin");
    const otherRecord = (await api.get(`/vaults/${other.vaultId}`, { token: alice.http.currentTokens!.accessToken })).body;
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}` ? { ...otherRecord, vaultName: "Team 9" } : body;
    await refusedWithoutChange(team.vaultId, "INCONSISTENT", () => victim.items.add(team.vaultId, { name: "new", fields: { pw: "1" } }));
    await expect(victim.items.list(team.vaultId)).rejects.toMatchObject({ code: "INCONSISTENT" });
    // The victim's open session has the key at version 1; carol removes bob and rekeys; the server
    // keeps answering the version-1 record, whose key bob holds.
    proxy.edit = honest;
    await victim.items.add(team.vaultId, { name: "before", fields: { pw: "0" } });
    const atV1 = (await api.get(`/vaults/${team.vaultId}`, { token: alice.http.currentTokens!.accessToken })).body;
    await carol.members.remove(team.vaultId, bob.account.userId);
    await carol.vaults.rekey(team.vaultId);
    proxy.edit = (method, path, body) => (method === "GET" && path === `/vaults/${team.vaultId}` ? atV1 : body);
    await refusedWithoutChange(team.vaultId, "WRAP_MISMATCH", () => victim.items.add(team.vaultId, { name: "new", fields: { pw: "1" } }));
    await expect(victim.items.list(team.vaultId)).rejects.toMatchObject({ code: "WRAP_MISMATCH" });
    proxy.edit = honest;
    await expect(victim.items.add(team.vaultId, { name: "new", fields: { pw: "1" } })).resolves.toMatchObject({ name: "new" });
    expect((await victim.vaults.get(team.vaultId)).keyVersion).toBe(2);
  });

  test("10. keys trusted only once every check passed: a signer's keys the roster contradicts are not pinned; the caller's own entry under another's email is refused", async () => {
    const team = await carol.vaults.create("Team 10", "shared");
    await carol.members.share(team.vaultId, alice.account.userId, "admin");
    await carol.items.add(team.vaultId, { name: "from carol", fields: { pw: "c" } });
    // A device of alice's that never saw carol: the server shows its own keys for her.
    const made = await createAccountKeys("server", { rsaBits: 2048, kdf: { ...TEST_KDF, salt: toBase64(new Uint8Array(16)) } });
    const device = newDevice();
    const victim = through(device);
    await victim.login(alice.account.email, PASSWORD);
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/users/${carol.account.userId}/keys`
        ? { ...body, ...publicPart(made.registration), keyStatement: undefined }
        : body;
    await expect(victim.items.list(team.vaultId)).rejects.toMatchObject({ code: "KEY_CHANGED", userId: carol.account.userId });
    // The roster recorded carol's real keys: the server's were refused before they were pinned.
    expect(await device.pins.get(carol.account.userId)).toBeUndefined();
    await refusedWithoutChange(team.vaultId, "KEY_CHANGED", () => victim.members.share(team.vaultId, bob.account.userId));
    proxy.edit = honest;
    await expect(victim.items.list(team.vaultId)).resolves.toMatchObject([{ name: "from carol" }]);
    expect(await device.pins.get(carol.account.userId)).toMatchObject({
      fingerprint: (await victim.keys.fingerprint(carol.account.userId)).current,
    });
    // Eve, whom this device never looked up, is pinned with the keys the roster recorded when carol added her:
    // the server's own keys for her are refused, not trusted on first use.
    expect(await device.pins.get(eve.userId)).toBeUndefined();
    await carol.members.share(team.vaultId, eve.userId);
    proxy.edit = honest;
    await victim.members.roster(team.vaultId);
    expect(await device.pins.get(eve.userId)).toMatchObject({ fingerprint: (await victim.keys.fingerprint(eve.userId)).current });
    const other = await victim.vaults.create("Alice 10", "shared");
    const evesFromServer = (method: string, path: string, body: any) =>
      method === "GET" && path === `/users/${eve.userId}/keys`
        ? { ...body, ...publicPart(made.registration), keyStatement: undefined }
        : body;
    proxy.edit = evesFromServer;
    await refusedWithoutChange(other.vaultId, "KEY_CHANGED", () => victim.members.share(other.vaultId, eve.userId));
    // One email listed for two users (bob and eve): neither is taken as its owner.
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/orgs/${alice.account.orgId}/members`
        ? {
            members: body.members.map((m: any) =>
              m.userId === eve.userId ? { ...m, email: bob.account.email, keyStatement: undefined } : m,
            ),
          }
        : body;
    const fresh = through();
    await fresh.login(alice.account.email, PASSWORD);
    const listed = await fresh.people.list();
    expect(listed.filter((m) => m.email === bob.account.email).map((m) => m.problem?.code)).toEqual([
      "IDENTITY_MISMATCH",
      "IDENTITY_MISMATCH",
    ]);
    await expect(fresh.people.find(bob.account.email)).rejects.toMatchObject({ code: "IDENTITY_MISMATCH" });
    // The organization's list shows alice's own id under bob's email, and bob nowhere: "bob" is not alice.
    const bobEmail = bob.account.email;
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/orgs/${alice.account.orgId}/members`
        ? {
            members: body.members
              .filter((m: any) => m.userId !== bob.account.userId)
              .map((m: any) => (m.userId === alice.account.userId ? { ...m, email: bobEmail } : m)),
          }
        : body;
    const own = (await victim.people.list()).find((m) => m.userId === alice.account.userId)!;
    expect(own.problem).toMatchObject({ code: "IDENTITY_MISMATCH" });
    await refusedWithoutChange(team.vaultId, "IDENTITY_MISMATCH", async () => {
      const who = await victim.people.find(bobEmail);
      await victim.members.remove(team.vaultId, who.userId);
    });
  });

  test("11. a login answer for another account or organization than this device knows under the email: the session is not taken up", async () => {
    for (const [what, lie] of [
      ["another user id (eve's)", (b: any) => ({ ...b, userId: eve.userId })],
      ["another organization", (b: any) => ({ ...b, orgId: randomUUID() })],
    ] as const) {
      proxy.edit = (method, path, body) => (method === "POST" && path === "/auth/login" ? lie(body) : body);
      const victim = through(aliceDevice);
      const from = proxy.sent.length;
      await expect(victim.login(alice.account.email, PASSWORD)).rejects.toMatchObject({ name: "SecurityError", code: "IDENTITY_MISMATCH" });
      expect(() => victim.account).toThrow();
      // Nothing signed over the id or organization the server chose, nor pinned under them.
      expect([what, changes(from)]).toEqual([what, []]);
    }
    expect(await aliceDevice.pins.get(eve.userId)).not.toMatchObject({ email: alice.account.email });
    expect(await aliceDevice.kdfMemory.get(alice.account.email)).toMatchObject({
      userId: alice.account.userId,
      orgId: alice.account.orgId,
    });
    // A device's first login, answered with a key statement alice never signed: refused, and nothing
    // of it kept on the device (not even a pin of her own keys).
    proxy.edit = (method, path, body) =>
      method === "POST" && path === "/auth/login"
        ? { ...body, keyStatement: { version: 1, signature: toBase64(new Uint8Array(64).fill(3)) } }
        : body;
    const first = newDevice();
    await expect(through(first).login(alice.account.email, PASSWORD)).rejects.toMatchObject({ code: "IDENTITY_MISMATCH" });
    expect([await first.pins.entries(), await first.kdfMemory.entries()]).toEqual([[], []]);
    // The KDF statement version a device remembers never goes down (an older statement stays a replay).
    proxy.edit = honest;
    const later = newDevice();
    await later.kdfMemory.set(alice.account.email, { ...(await aliceDevice.kdfMemory.get(alice.account.email))!, version: 5 });
    await through(later).login(alice.account.email, PASSWORD);
    expect(await later.kdfMemory.get(alice.account.email)).toMatchObject({ version: 5 });
  });

  test("12. a signed vault whose roster the server withholds from a new device: no rekey for the member list it shows, no write", async () => {
    const team = await alice.vaults.create("Team 12", "shared");
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    const evesEntry = { userId: eve.userId, role: "admin" };
    proxy.edit = (method, path, body) => {
      if (method === "GET" && path === `/vaults/${team.vaultId}/roster`) return { links: [] };
      if (method === "GET" && path === `/vaults/${team.vaultId}/members`)
        return { members: [...body.members, { ...body.members[0], ...evesEntry }] };
      return body;
    };
    const victim = through();
    await victim.login(alice.account.email, PASSWORD);
    await refusedWithoutChange(team.vaultId, "UNSIGNED_VAULT", () => victim.vaults.rekey(team.vaultId));
    await refusedWithoutChange(team.vaultId, "UNSIGNED_VAULT", () => victim.items.add(team.vaultId, { name: "x", fields: { pw: "1" } }));
    // On a device that saw the roster, the same answer is a rollback.
    await refusedWithoutChange(team.vaultId, "ROSTER_ROLLBACK", async () => (await aliceAgain()).vaults.rekey(team.vaultId));
  });

  test("13. trusting a changed key: pinned under the email the person checked, not one the server slips in meanwhile", async () => {
    const device = newDevice();
    const victim = through(device);
    await victim.login(alice.account.email, PASSWORD);
    const carolEmail = carol.account.email;
    await victim.people.find(carolEmail);
    const made = await createAccountKeys("server", { rsaBits: 2048, kdf: { ...TEST_KDF, salt: toBase64(new Uint8Array(16)) } });
    const asServer =
      (shownEmail: string): Edit =>
      (method, path, body) =>
        method === "GET" && path === `/users/${carol.account.userId}/keys`
          ? { ...body, ...publicPart(made.registration), email: shownEmail, keyStatement: undefined }
          : body;
    // The user checks the fingerprint shown for carol, and trusts it; the second lookup names the CEO.
    proxy.edit = asServer(carolEmail);
    const { current } = await victim.keys.fingerprint(carol.account.userId);
    const before = await device.pins.get(carol.account.userId);
    proxy.edit = asServer("ceo@example.test");
    await expect(victim.keys.trust(carol.account.userId, current, carolEmail)).rejects.toMatchObject({ code: "IDENTITY_MISMATCH" });
    expect(await device.pins.get(carol.account.userId)).toEqual(before);
    // Under the email checked, it is pinned as checked.
    proxy.edit = asServer(carolEmail);
    await victim.keys.trust(carol.account.userId, current, carolEmail);
    expect(await device.pins.get(carol.account.userId)).toEqual({ fingerprint: current, email: carolEmail, via: "checked" });
  });

  test("14. two verifications of one roster at once, one answered with the chain before a removal: the head this device saw never moves back", async () => {
    const team = await alice.vaults.create("Team 14", "shared");
    await alice.members.share(team.vaultId, bob.account.userId);
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    await alice.members.remove(team.vaultId, bob.account.userId);
    // A store whose reads take a while (as IndexedDB's may), the value read when asked.
    const heads = new MemoryRosterHeadStore();
    const slowHeads: RosterHeadStore = {
      get: async (id) => {
        const value = await heads.get(id);
        await sleep(300);
        return value;
      },
      set: (id, value) => heads.set(id, value),
      entries: () => heads.entries(),
    };
    // The first answer of the roster stops before the removal and comes late.
    let rosterAnswers = 0;
    const lateAndShort: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith(`/vaults/${team.vaultId}/roster`) || rosterAnswers++ > 0) return res;
      const { links } = (await res.json()) as { links: unknown[] };
      await sleep(150);
      return new Response(JSON.stringify({ links: links.slice(0, -1) }), { status: 200, headers: { "content-type": "application/json" } });
    };
    const victim = new VaultClient({ ...newDevice(), baseUrl: proxy.url, rosterHeads: slowHeads, fetch: lateAndShort });
    await victim.login(alice.account.email, PASSWORD);
    const results = await Promise.allSettled([victim.members.roster(team.vaultId), victim.members.roster(team.vaultId)]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await heads.get(team.vaultId)).toMatchObject({ seq: 3 });
    // So the chain without the removal stays refused, and nothing is written under the key bob holds.
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}/roster` ? { links: body.links.slice(0, -1) } : body;
    await refusedWithoutChange(team.vaultId, "ROSTER_ROLLBACK", () => victim.items.add(team.vaultId, { name: "new", fields: { pw: "1" } }));
  });

  test("15. the item list follows pages forward only: a page answered again, or out of order, is refused rather than read in a loop", async () => {
    const v = await alice.vaults.create("Pages 15", "shared");
    for (let i = 0; i < 3; i++) await alice.items.add(v.vaultId, { name: `n${i}`, fields: { pw: String(i) } });
    // Honest: the SDK asks what changed since its last read of the vault (a delta read: here it
    // read the vault while adding the items), no pages. Sent to the whole list (an answer marked
    // `full`), it asks pages and follows `next` (one page here), and reads every item.
    proxy.sent.length = 0;
    expect((await alice.items.list(v.vaultId)).map((i) => i.name).sort()).toEqual(["n0", "n1", "n2"]);
    expect(
      proxy.sent.filter((r) => r.path.startsWith(`/vaults/${v.vaultId}/items`)).map((r) => r.path.replace(/since=\d+/, "since=N")),
    ).toEqual([`/vaults/${v.vaultId}/items?since=N`]);
    // From here on, every delta read is sent to the whole list, whose pages the attacks are on.
    const listing = (path: string) => path === `/vaults/${v.vaultId}/items`; // the edit sees the path without its query
    const toPages =
      (edit: Edit): Edit =>
      (method, path, body, status) =>
        method === "GET" && listing(path) && status === 200 && body && "cursor" in body
          ? { items: [], deleted: [], cursor: body.cursor, full: true }
          : edit(method, path, body, status);
    proxy.edit = toPages(honest);
    proxy.sent.length = 0;
    expect(await alice.items.list(v.vaultId)).toHaveLength(3);
    expect(
      proxy.sent.filter((r) => r.path.startsWith(`/vaults/${v.vaultId}/items`)).map((r) => r.path.replace(/since=\d+/, "since=N")),
    ).toEqual([`/vaults/${v.vaultId}/items?since=N`, `/vaults/${v.vaultId}/items?limit=500`]);
    // The same page again and again, each time claiming another follows.
    // (A cursor the service accepts: the place of the first item, so the service answers again what follows it.)
    const first = (await alice.items.list(v.vaultId))[0]!;
    const back = Buffer.from(`${first.createdAt} ${first.itemId}`).toString("base64url");
    proxy.edit = toPages((method, path, body, status) =>
      method === "GET" && listing(path) && status === 200 ? { items: body.items, next: back } : body,
    );
    await expect(alice.items.list(v.vaultId)).rejects.toMatchObject({ code: "ITEM_MISMATCH" }); // an item listed twice
    // The items reordered.
    proxy.edit = toPages((method, path, body) => (method === "GET" && listing(path) ? { items: [...body.items].reverse() } : body));
    await expect(alice.items.list(v.vaultId)).rejects.toMatchObject({ code: "INCONSISTENT" });
    // An empty page that says another follows.
    proxy.edit = toPages((method, path, body) => (method === "GET" && listing(path) ? { items: [], next: back } : body));
    await expect(alice.items.list(v.vaultId)).rejects.toMatchObject({ code: "INCONSISTENT" });
    proxy.edit = honest;
    expect(await alice.items.list(v.vaultId)).toHaveLength(3);
  });

  test("16. a rekey that lands while the item list is read: the list is read again under the new key, not reported as tampered", async () => {
    const v = await alice.vaults.create("Team 16", "shared");
    await alice.items.add(v.vaultId, { name: "x", fields: { pw: "1" } });
    let rekeyed = false;
    const racing: typeof fetch = async (input, init) => {
      if (!rekeyed && String(input).includes(`/vaults/${v.vaultId}/items?`)) {
        rekeyed = true;
        await alice.vaults.rekey(v.vaultId); // after the reader opened the key, before its first page
      }
      return fetch(input, init);
    };
    const reader = new VaultClient({ ...newDevice(), baseUrl: proxy.url, fetch: racing });
    await reader.login(alice.account.email, PASSWORD);
    expect((await reader.items.list(v.vaultId)).map((i) => i.name)).toEqual(["x"]);
    expect(rekeyed).toBe(true);
  });
});
