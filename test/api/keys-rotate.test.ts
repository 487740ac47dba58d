/**
 * Rotating a user's keys, with the real SDK against the real service, on SQLite and
 * PostgreSQL: a signed step in the user's key log, every vault's key wrapped to the new keys in
 * the same transaction (with `rotate` roster links and the user's wraps for others signed again),
 * the other sessions ended. Peers follow the key log from the keys they pinned without a warning,
 * and items signed before the rotation still verify. A rotation from an older read, or one missing
 * a vault or a re-signed wrap, is refused whole. A dishonest server (a proxy that rewrites answers)
 * cannot slip in an unsigned key, roll a followed log back, or fork it.
 */
import { randomUUID } from "node:crypto";
import { ApiError, MemoryPinStore, MemoryValues, SecurityError, VaultClient, type RememberedKdf } from "../../sdk";
import { genesisEntry, signKeyLogStep, type KeyLogEntry } from "../../protocol/formats/key-log";
import { openAccountKeys, keyFingerprint } from "../../protocol/crypto/keys";
import { toBase64 } from "../../protocol/encoding";
import { ed25519Sign, generateEd25519KeyPair, generateRsaKeyPair, importEd25519PrivateKey } from "../../protocol/crypto/primitives";
import { startDishonestProxy, type DishonestProxy } from "../helpers/dishonest-proxy";
import { SQL_ENGINES } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(240_000);

const PASSWORD = "correct horse battery staple";

/** A `fetch` that holds the rotation (answering 503) and lets everything else through. */
function holding() {
  const held: Array<{ body: any }> = [];
  const fetcher: typeof fetch = async (input, init) => {
    if (String(input).endsWith("/users/me/keys") && init?.method === "POST") {
      held.push({ body: JSON.parse(String(init.body)) });
      return new Response(JSON.stringify({ error: { code: "UNAVAILABLE", message: "held by the test" } }), { status: 503 });
    }
    return fetch(input, init);
  };
  return { held, fetcher };
}

async function problemOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

async function refusal(p: Promise<unknown>): Promise<[number, string, string | undefined]> {
  const err = await problemOf(p);
  expect(err).toBeInstanceOf(ApiError);
  return [(err as ApiError).status, (err as ApiError).code, (err as ApiError).field];
}

async function securityProblem(p: Promise<unknown>): Promise<string> {
  const err = await problemOf(p);
  expect(err).toBeInstanceOf(SecurityError);
  return (err as SecurityError).code;
}

describe.each(SQL_ENGINES)("key rotation, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let proxy: DishonestProxy;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open" });
    proxy = await startDishonestProxy(new URL(server.url).origin);
  });
  afterEach(() => {
    proxy.edit = (_m, _p, body) => body;
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    await dropDatabase?.();
  });

  /** A device: its own pins and KDF memory, through the proxy (honest unless a test edits it) or with its own fetch. */
  const device = (opts: { fetch?: typeof fetch; kdfMemory?: MemoryValues<RememberedKdf>; pins?: MemoryPinStore } = {}) =>
    new VaultClient({ baseUrl: proxy.url, ...opts });

  /** An organization: Ada, its owner, and the people she invites, each logged in on one device. */
  async function org(...names: string[]) {
    const tag = randomUUID().slice(0, 8);
    const ada = device({ kdfMemory: new MemoryValues(), pins: new MemoryPinStore() });
    await ada.register({ email: `ada-${tag}@example.test`, password: PASSWORD, kdf: TEST_KDF, orgName: "Acme" });
    const people: VaultClient[] = [];
    for (const name of names) {
      const email = `${name}-${tag}@example.test`;
      const invite = await ada.invites.create(email, "member");
      const person = device();
      await person.register({ email, password: PASSWORD, kdf: TEST_KDF, invite: invite.code });
      people.push(person);
    }
    return { ada, people };
  }

  test("a rotation: a signed step in the key log, every vault opens with the new keys, peers follow without a warning, other sessions end", async () => {
    const { ada, people } = await org("bob");
    const bob = people[0]!;
    const adaId = ada.account.userId;
    // Ada's second device (its own memory of her keys), logged in before the rotation.
    const laptop = { kdfMemory: new MemoryValues<RememberedKdf>(), pins: new MemoryPinStore() };
    const adaLaptop = device(laptop);
    await adaLaptop.login(ada.account.email, PASSWORD);

    const team = await ada.vaults.create("Team");
    await ada.items.add(team.vaultId, { name: "GitHub", fields: { password: "team secret" } });
    await ada.members.share(team.vaultId, bob.account.userId);
    const diary = await ada.vaults.create("Diary", "personal");
    await ada.items.add(diary.vaultId, { name: "Bank", fields: { password: "hunter2" } });
    const bobs = await bob.vaults.create("Bob's");
    await bob.items.add(bobs.vaultId, { name: "Wiki", fields: { password: "wiki pass" } });
    await bob.members.share(bobs.vaultId, adaId);
    // Bob has seen Ada's keys (pinned on first use) and her item.
    expect((await bob.items.list(team.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);
    const before = await bob.keys.fingerprint(adaId);

    const prelogin = () =>
      ada.http.request<{ kdf: unknown; kdfStatement: { version: number } }>("GET", "/auth/prelogin", {
        auth: false,
        query: { email: ada.account.email },
      });
    const preloginBefore = await prelogin();
    const rotated = await ada.keys.rotate();
    expect(rotated).toMatchObject({ keyVersion: 2, accountVersion: 2, sessionsEnded: 1, vaults: 3 });
    // Prelogin answers as before (the same parameters, at the same statement version): a rotation does not show there.
    expect((await prelogin()).kdfStatement.version).toBe(preloginBefore.kdfStatement.version);
    expect((await prelogin()).kdf).toEqual(preloginBefore.kdf);
    expect(rotated.fingerprint).not.toBe(before.current);
    expect((await ada.keys.log(adaId)).map((e) => e.version)).toEqual([1, 2]);

    // The laptop's session ended with the rotation.
    expect(await refusal(adaLaptop.vaults.list())).toEqual([401, "UNAUTHORIZED", undefined]);
    // Bob follows the signed step: no warning, the new keys pinned; the item Ada signed before the rotation still verifies.
    expect((await bob.items.list(team.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);
    expect(await bob.keys.fingerprint(adaId)).toMatchObject({ current: rotated.fingerprint, pinned: rotated.fingerprint });
    // Ada, with her new keys, writes and opens everything; Bob reads what she writes now.
    await ada.items.add(team.vaultId, { name: "AWS", fields: { password: "after rotation" } });
    expect((await bob.items.list(team.vaultId)).map((i) => i.fields.password).sort()).toEqual(["after rotation", "team secret"]);
    expect((await ada.items.list(bobs.vaultId)).map((i) => i.fields.password)).toEqual(["wiki pass"]);
    // Bob shares with her now: his wrap goes to her new keys.
    const later = await bob.vaults.create("Later");
    await bob.members.share(later.vaultId, adaId);
    await ada.vaults.open(await ada.vaults.get(later.vaultId));

    // Her laptop logs in again: it remembered the old keys, and follows her signed log to the new ones.
    const again = device(laptop);
    await again.login(ada.account.email, PASSWORD);
    expect((await again.items.list(diary.vaultId)).map((i) => i.fields.password)).toEqual(["hunter2"]);
    expect((await again.items.list(team.vaultId)).map((i) => i.fields.password).sort()).toEqual(["after rotation", "team secret"]);
    // A device that never saw her logs in and reads everything too.
    const fresh = device();
    await fresh.login(ada.account.email, PASSWORD);
    expect((await fresh.items.list(bobs.vaultId)).map((i) => i.fields.password)).toEqual(["wiki pass"]);

    // And once more: the log grows by one signed step, and Bob follows two steps at once.
    const third = await ada.keys.rotate();
    expect(third.keyVersion).toBe(3);
    const bobLater = device({ pins: new MemoryPinStore() });
    await bobLater.login(bob.account.email, PASSWORD);
    expect((await bob.items.list(team.vaultId)).length).toBe(2);
    expect((await bobLater.items.list(team.vaultId)).length).toBe(2);

    // A new master password after the rotations (new KDF salt, signed by her newest key): the laptop, which
    // remembers her version-2 key, follows her log at prelogin to the key that signed the new parameters.
    await ada.changePassword(PASSWORD, "a new master password for Ada 2026");
    const afterChange = device(laptop);
    await afterChange.login(ada.account.email, "a new master password for Ada 2026");
    expect((await afterChange.items.list(diary.vaultId)).map((i) => i.fields.password)).toEqual(["hunter2"]);
  });

  test("refused whole: an older read, a vault or a re-signed wrap left out, a step not signed by the current key, reused keys; nothing half-written", async () => {
    const { ada, people } = await org("bob");
    const bob = people[0]!;
    const team = await ada.vaults.create("Team");
    await ada.members.share(team.vaultId, bob.account.userId);
    await ada.vaults.create("Diary", "personal");
    const oldKeys = await keyFingerprint(ada.account);
    const v1Keys = await openAccountKeys(ada.exportStretchedKey(), ada.account);

    // The SDK's genuine request, held.
    const { held, fetcher } = holding();
    const holder = device({ fetch: fetcher });
    await holder.login(ada.account.email, PASSWORD);
    expect(await refusal(holder.keys.rotate())).toEqual([503, "UNAVAILABLE", undefined]);
    const genuine = held[0]!.body;
    // Sent from another session of hers (the holder's fetch holds every rotation).
    const sender = device();
    await sender.login(ada.account.email, PASSWORD);
    const send = (body: unknown) => sender.http.request("POST", "/users/me/keys", { body });
    const teamAt = genuine.vaults.findIndex((v: any) => v.vaultId === team.vaultId);

    expect(await refusal(send({ ...genuine, accountVersion: genuine.accountVersion + 1 }))).toEqual([409, "CONFLICT", "accountVersion"]);
    expect(await refusal(send({ ...genuine, vaults: genuine.vaults.slice(1) }))).toEqual([409, "CONFLICT", "vaults"]);
    const withoutResign = structuredClone(genuine);
    withoutResign.vaults[teamAt].resigned = [];
    expect(await refusal(send(withoutResign))).toEqual([409, "CONFLICT", "vaults.resigned"]);
    // Signed by the new key alone (as a server that made up the step would have to): no.
    expect(await refusal(send({ ...genuine, keyLogEntry: { ...genuine.keyLogEntry, sig: genuine.keyLogEntry.selfSig } }))).toEqual([
      400,
      "INVALID",
      "keyLogEntry.sig",
    ]);
    expect(await refusal(send({ ...genuine, keyLogEntry: { ...genuine.keyLogEntry, version: 3 } }))).toEqual([
      409,
      "CONFLICT",
      "keyLogEntry",
    ]);
    expect(await refusal(send({ ...genuine, keyStatement: { ...genuine.keyStatement, version: 1 } }))).toEqual([
      400,
      "INVALID",
      "keyStatement.version",
    ]);
    // Nothing was written: Ada logs in with her old keys, and her log is one entry.
    const check = device();
    await check.login(ada.account.email, PASSWORD);
    expect(await keyFingerprint(check.account)).toBe(oldKeys);
    expect((await check.keys.log(ada.account.userId)).length).toBe(1);

    // A vault shared with her after the rotation was read: left out of it, so refused (the SDK reads again).
    const late = await bob.vaults.create("Shared late");
    await bob.members.share(late.vaultId, ada.account.userId);
    expect(await refusal(send(genuine))).toEqual([409, "CONFLICT", "vaults"]);
    await ada.members.remove(late.vaultId, ada.account.userId);
    // Someone outside her organization has no key log she may read.
    const stranger = device();
    await stranger.register({
      email: `stranger-${randomUUID().slice(0, 8)}@example.test`,
      password: PASSWORD,
      kdf: TEST_KDF,
      orgName: "Else",
    });
    expect(await refusal(sender.http.request("GET", `/users/${stranger.account.userId}/key-log`))).toEqual([404, "NOT_FOUND", undefined]);

    // The genuine request goes through once; again, it is from an older read.
    expect(await send(genuine)).toMatchObject({ accountVersion: 2, keyVersion: 2 });
    expect(await refusal(send(genuine))).toEqual([409, "CONFLICT", "accountVersion"]);

    // Back to the keys of version 1, signed as a step by the current key and by them: keys used before are refused.
    const fresh = device();
    await fresh.login(ada.account.email, PASSWORD);
    const current = await openAccountKeys(fresh.exportStretchedKey(), fresh.account);
    const log = (await fresh.http.request<{ entries: KeyLogEntry[] }>("GET", `/users/${ada.account.userId}/key-log`)).entries;
    const { publicKey, signingPublicKey, publicKeySignature } = log[0]!;
    const back = await signKeyLogStep(
      log[1]!,
      { publicKey, signingPublicKey, publicKeySignature, at: new Date().toISOString() },
      current.signingPrivateKey,
      v1Keys.signingPrivateKey,
    );
    expect(
      await refusal(fresh.http.request("POST", "/users/me/keys", { body: { ...genuine, accountVersion: 2, keyLogEntry: back } })),
    ).toEqual([400, "INVALID", "keyLogEntry.publicKey"]);
  });

  test("a vault she left before rotating: the wraps she made there, signed by her old key, still open for the others", async () => {
    const { ada, people } = await org("bob", "cy");
    const [bob, cy] = people as [VaultClient, VaultClient];
    const club = await ada.vaults.create("Club");
    await ada.items.add(club.vaultId, { name: "Door", fields: { password: "1234" } });
    await ada.members.share(club.vaultId, bob.account.userId);
    await ada.members.share(club.vaultId, cy.account.userId, "admin");
    await ada.members.changeRole(club.vaultId, cy.account.userId, "owner");
    await ada.members.remove(club.vaultId, ada.account.userId);
    await ada.keys.rotate();
    // Bob's wrap is still the one Ada made, signed by her first key; the roster vouches for it, her log for that key.
    expect((await bob.items.list(club.vaultId)).map((i) => i.fields.password)).toEqual(["1234"]);
    // Cy, its owner now, rekeys it (Ada still held the key): her own wrap opens, as the rekey needs.
    expect((await cy.vaults.rekey(club.vaultId)).keyVersion).toBe(2);
    expect((await bob.items.list(club.vaultId)).map((i) => i.fields.password)).toEqual(["1234"]);
  });

  test("a rotation racing a rekey of a vault it holds: both land, one after the other, and both keys open it", async () => {
    const { ada, people } = await org("bob");
    const bob = people[0]!;
    const team = await ada.vaults.create("Team");
    await ada.items.add(team.vaultId, { name: "GitHub", fields: { password: "team secret" } });
    await ada.members.share(team.vaultId, bob.account.userId);
    await bob.items.list(team.vaultId);
    const [rotation, rekey] = await Promise.allSettled([bob.keys.rotate(), ada.vaults.rekey(team.vaultId)]);
    expect(rotation.status).toBe("fulfilled");
    expect(rekey.status).toBe("fulfilled");
    // Whichever came first, Bob's wrap is to his new keys and of the vault's current key.
    const fresh = device();
    await fresh.login(bob.account.email, PASSWORD);
    expect((await fresh.items.list(team.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);
    expect((await ada.items.list(team.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);
    expect((await ada.vaults.get(team.vaultId)).keyVersion).toBe(2);

    // A roster change landing between the rotation's reads and its request: refused naming the vault's link, read again, done.
    let renamed = false;
    const renaming: typeof fetch = async (input, init) => {
      if (!renamed && String(input).endsWith("/users/me/keys") && init?.method === "POST") {
        renamed = true;
        await ada.vaults.rename(team.vaultId, "Team, renamed");
      }
      return fetch(input, init);
    };
    const sent: number[] = [];
    const bobAgain = device({
      fetch: async (input, init) => {
        const res = await renaming(input, init);
        if (String(input).endsWith("/users/me/keys")) sent.push(res.status);
        return res;
      },
    });
    await bobAgain.login(bob.account.email, PASSWORD);
    expect((await bobAgain.keys.rotate()).keyVersion).toBe(3);
    expect(sent).toEqual([400, 200]);
    expect((await ada.items.list(team.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);

    // A share to Bob while he rotates, between the lookup of his keys and the request: refused for naming
    // his old keys, looked up again (his signed log followed), and sent to his new keys.
    const adaDevice = device();
    await adaDevice.login(ada.account.email, PASSWORD);
    const later = await adaDevice.vaults.create("Later");
    let rotatedFirst = false;
    const shares: number[] = [];
    const adaSharing = device({
      fetch: async (input, init) => {
        if (String(input).endsWith(`/vaults/${later.vaultId}/members`) && init?.method === "POST") {
          if (!rotatedFirst) {
            rotatedFirst = true;
            await bobAgain.keys.rotate();
          }
          const res = await fetch(input, init);
          shares.push(res.status);
          return res;
        }
        return fetch(input, init);
      },
    });
    await adaSharing.login(ada.account.email, PASSWORD);
    await adaSharing.items.list(team.vaultId);
    await adaSharing.members.share(later.vaultId, bob.account.userId);
    expect(shares).toEqual([400, 204]);
    await bobAgain.vaults.open(await bobAgain.vaults.get(later.vaultId));
  });

  test("a dishonest server: a key without a signed step stays KEY_CHANGED; a followed log rolled back or forked is refused", async () => {
    const { ada, people } = await org("bob");
    const bob = people[0]!;
    const adaId = ada.account.userId;
    const team = await ada.vaults.create("Team");
    await ada.items.add(team.vaultId, { name: "GitHub", fields: { password: "team secret" } });
    await ada.members.share(team.vaultId, bob.account.userId);
    await bob.items.list(team.vaultId);
    // What an attacker who stole Ada's first keys holds: her version-1 private keys.
    const stolen = await openAccountKeys(ada.exportStretchedKey(), ada.account);
    const v1 = (await bob.http.request<{ entries: KeyLogEntry[] }>("GET", `/users/${adaId}/key-log`)).entries[0]!;
    const v1Bundle = await bob.keys.of(adaId);

    // Mallory's keys served as Ada's, with no step, or with a step only Mallory signed.
    const mallory = await (async () => {
      const [rsa, ed] = await Promise.all([generateRsaKeyPair(2048), generateEd25519KeyPair()]);
      const key = await importEd25519PrivateKey(ed.privateKeyPkcs8);
      return {
        key,
        bundle: {
          publicKey: toBase64(rsa.publicKeyDer),
          signingPublicKey: toBase64(ed.publicKeyRaw),
          publicKeySignature: toBase64(await ed25519Sign(key, rsa.publicKeyDer)),
        },
      };
    })();
    const keysPath = `/users/${adaId}/keys`;
    const logPath = `/users/${adaId}/key-log`;
    const asMallory = (body: any) => {
      const { keyStatement: _dropped, ...rest } = body;
      return { ...rest, ...mallory.bundle };
    };
    proxy.edit = (_m, path, body) => (path === keysPath ? asMallory(body) : body);
    expect(await securityProblem(bob.keys.of(adaId))).toBe("KEY_CHANGED");
    const forgedStep = await signKeyLogStep(v1, { ...mallory.bundle, at: new Date().toISOString() }, mallory.key, mallory.key);
    proxy.edit = (_m, path, body) => (path === keysPath ? asMallory(body) : path === logPath ? { entries: [v1, forgedStep] } : body);
    expect(await securityProblem(bob.keys.of(adaId))).toBe("KEY_LOG_BROKEN");
    proxy.edit = (_m, _p, body) => body;

    // A second device of Bob's that pinned her first keys and has not met her since.
    const bobTablet = device({ pins: new MemoryPinStore() });
    await bobTablet.login(bob.account.email, PASSWORD);
    await bobTablet.items.list(team.vaultId);
    const bobsOwn = await bob.vaults.create("Bob's own");

    // The genuine rotation: followed.
    const rotated = await ada.keys.rotate();
    expect((await bob.keys.of(adaId)).signingPublicKey).toBe(ada.account.signingPublicKey);
    expect((await bob.keys.fingerprint(adaId)).pinned).toBe(rotated.fingerprint);

    // The tablet reads Team's roster (her `rotate` link, signed by the keys it pinned) while the server still shows her
    // old keys: its pin follows her log all the same, so those replaced keys are refused, never wrapped to.
    proxy.edit = (_m, path, body) => (path === keysPath ? { ...body, ...v1Bundle } : body);
    await bobTablet.members.roster(team.vaultId);
    expect(await securityProblem(bobTablet.members.share(bobsOwn.vaultId, adaId))).toBe("KEY_LOG_ROLLBACK");
    proxy.edit = (_m, _p, body) => body;

    // Her own next rotation, offered a log cut down to her current keys (to sign a history without her first keys): refused.
    const current = await bob.keys.of(adaId);
    proxy.edit = (_m, path, body) => (path === logPath ? { entries: [genesisEntry(adaId, current)] } : body);
    expect(await securityProblem(ada.keys.rotate({ rsaBits: 2048 }))).toBe("KEY_LOG_ROLLBACK");
    proxy.edit = (_m, _p, body) => body;

    // Rolled back: her old keys, and her log cut before the rotation.
    proxy.edit = (_m, path, body) => (path === keysPath ? { ...body, ...v1Bundle } : path === logPath ? { entries: [v1] } : body);
    expect(await securityProblem(bob.keys.of(adaId))).toBe("KEY_LOG_ROLLBACK");
    // Her old keys, with the whole log: keys the log replaced.
    proxy.edit = (_m, path, body) => (path === keysPath ? { ...body, ...v1Bundle } : body);
    expect(await securityProblem(bob.keys.of(adaId))).toBe("KEY_LOG_ROLLBACK");

    // Forked: the thief of her first keys signs another version 2, and the server shows it.
    const forkedStep = await signKeyLogStep(v1, { ...mallory.bundle, at: new Date().toISOString() }, stolen.signingPrivateKey, mallory.key);
    proxy.edit = (_m, path, body) => (path === keysPath ? asMallory(body) : path === logPath ? { entries: [v1, forkedStep] } : body);
    expect(await securityProblem(bob.keys.of(adaId))).toBe("KEY_LOG_FORK");
    expect(await securityProblem(bob.items.list(team.vaultId))).toBe("KEY_LOG_FORK");
    proxy.edit = (_m, _p, body) => body;
    // Honest again: nothing of the attempts stuck.
    expect((await bob.items.list(team.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);
  });
});
