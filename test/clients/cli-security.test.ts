/**
 * Second factors and account recovery through the real `vaultctl` (dist/cli/main.js) against the
 * real server: an authenticator app enrolled in two steps and asked for at login (a code computed
 * here), a recovery code, and a forgotten password recovered from a new machine with two trustees'
 * approvals (one through vaultctl, one through the SDK).
 */
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { MemoryPinStore, VaultClient } from "../../sdk";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { vaultctl, type VaultctlRun } from "../helpers/vaultctl";
import { TestPasskeyAuthenticator } from "../helpers/passkey-authenticator";

jest.setTimeout(180_000);

describe("vaultctl: second factors and recovery", () => {
  let server: TestServer;
  const homes: string[] = [];
  const home = () => {
    const h = tempDir("vaultctl-sec-");
    homes.push(h);
    return h;
  };
  const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

  async function ok(dir: string, args: string[], input?: string): Promise<VaultctlRun> {
    const run = await vaultctl(args, { server: server.url, home: dir, input });
    if (run.code !== 0) throw new Error(`vaultctl ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
    return run;
  }

  beforeAll(async () => {
    server = await startTestServer({ REGISTRATION_MODE: "open" });
  });
  afterAll(async () => {
    await server?.stop();
    for (const h of homes) fs.rmSync(h, { recursive: true, force: true });
  });

  test("an authenticator app in two steps; login asks for a code; a recovery code works once", async () => {
    const dir = home();
    const address = email("ada");
    await ok(dir, ["register", address, "--org-name", "Acme", "--kdf", "pbkdf2"], `${SDK_PASSWORD}\n`);
    const started = await ok(dir, ["factors", "add-totp", "--name", "Phone", "--json"]);
    const secret = started.json.secret as string;
    expect(started.json.uri).toMatch(/^otpauth:\/\/totp\//);
    const wrong = await vaultctl(["factors", "confirm-totp", "000000"], { server: server.url, home: dir, input: `${SDK_PASSWORD}\n` });
    expect(wrong.code).not.toBe(0);
    const confirmed = await ok(dir, ["factors", "confirm-totp", referenceTotp(fromBase32(secret), Date.now())], `${SDK_PASSWORD}\n`);
    expect(confirmed.stdout).toMatch(/Recovery codes/);
    const codes = confirmed.stdout.match(/[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}/g)!;
    expect(codes).toHaveLength(10);

    // Without a code and no terminal: says which option gives it.
    const fresh = home();
    const asked = await vaultctl(["login", address], { server: server.url, home: fresh, input: `${SDK_PASSWORD}\n` });
    expect(asked.code).not.toBe(0);
    expect(asked.stderr).toMatch(/--totp or --recovery-code/);
    await ok(fresh, ["login", address, "--totp", referenceTotp(fromBase32(secret), Date.now() + 30_000)], `${SDK_PASSWORD}\n`);
    expect((await ok(fresh, ["factors", "--json"])).json).toMatchObject({
      factors: [{ kind: "totp", name: "Phone" }],
      recoveryCodesLeft: 10,
    });
    await ok(home(), ["login", address, "--recovery-code", codes[0]!.toLowerCase()], `${SDK_PASSWORD}\n`);
    const again = await vaultctl(["login", address, "--recovery-code", codes[0]!], {
      server: server.url,
      home: home(),
      input: `${SDK_PASSWORD}\n`,
    });
    expect(again.code).not.toBe(0);
    expect((await ok(fresh, ["policies"])).stdout).toMatch(/applied by clients only/);
  });

  test("a policy that would shut people out: refused naming them, set with --confirm-lock-out naming the policy", async () => {
    const dir = home();
    await ok(dir, ["register", email("owner"), "--org-name", "Acme", "--kdf", "pbkdf2"], `${SDK_PASSWORD}\n`);
    // No owner or admin has a second factor: requiring one would leave them enrolling only.
    const refused = await vaultctl(["policies", "set", "--require-2fa", "yes"], { server: server.url, home: dir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/requireSecondFactor|second factor/i);
    expect((await ok(dir, ["policies", "--json"])).json).toMatchObject({ requireSecondFactor: false });
    const typo = await vaultctl(["policies", "set", "--require-2fa", "yes", "--confirm-lock-out", "require2fa"], {
      server: server.url,
      home: dir,
    });
    expect([typo.code, typo.stderr]).toEqual([2, expect.stringMatching(/unknown policy require2fa/)]);
    await ok(dir, ["policies", "set", "--require-2fa", "yes", "--confirm-lock-out", "requireSecondFactor"]);
    expect((await ok(dir, ["policies", "--json"])).json).toMatchObject({ requireSecondFactor: true });
  });

  test("passkeys that sign in: listed with what they do, a lost one removed, and it signs in no more", async () => {
    const dir = home();
    const address = email("owner");
    await ok(dir, ["register", address, "--org-name", "Acme", "--kdf", "pbkdf2"], `${SDK_PASSWORD}\n`);
    const browser = new VaultClient({ baseUrl: server.url });
    await browser.login(address, SDK_PASSWORD);
    const authenticator = new TestPasskeyAuthenticator();
    const added = await browser.accountPasskeys.add({ name: "Laptop", password: SDK_PASSWORD, authenticator });
    expect((await ok(dir, ["passkeys"])).stdout).toMatch(/Laptop\s+signs in, unlocks/);
    expect((await ok(dir, ["passkeys", "--json"])).json).toMatchObject({ passkeys: [{ credentialId: added.credentialId, unlock: true }] });
    await ok(dir, ["passkeys", "remove", added.credentialId]);
    expect((await ok(dir, ["passkeys", "--json"])).json).toMatchObject({ passkeys: [] });
    await expect(new VaultClient({ baseUrl: server.url }).loginWithPasskey(authenticator)).rejects.toMatchObject({ status: 401 });
  });

  test("the passkey sign-in policy: set, shown, kept when another policy changes, and a wrong value refused", async () => {
    const dir = home();
    await ok(dir, ["register", email("owner"), "--org-name", "Acme", "--kdf", "pbkdf2"], `${SDK_PASSWORD}\n`);
    await ok(dir, ["policies", "set", "--passkeys", "forbidden"]);
    expect((await ok(dir, ["policies"])).stdout).toMatch(/Signing in with a passkey: forbidden/);
    await ok(dir, ["policies", "set", "--recovery-min", "3"]);
    expect((await ok(dir, ["policies", "--json"])).json).toMatchObject({ passkeySignIn: "forbidden", recoveryMinThreshold: 3 });
    const wrong = await vaultctl(["policies", "set", "--passkeys", "sometimes"], { server: server.url, home: dir });
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringMatching(/--passkeys takes allowed, forbidden or required/)]);
  });

  test("a forgotten password: recover start on a new machine, two trustees approve with the code read out, recover finish", async () => {
    const alice = new VaultClient({ baseUrl: server.url });
    await alice.register({ email: email("alice"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const invited = async (role: "admin" | "member") => {
      const address = email(role);
      const { code } = await alice.invites.create(address, role);
      const c = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
      await c.register({ email: address, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
      return c;
    };
    const carol = await invited("admin");
    const bob = await invited("member");
    await bob.keys.trust(carol.account.userId, await carol.keys.own(), carol.account.email);
    await bob.recovery.enrol([alice.account.userId, carol.account.userId], 2);

    const laptop = home();
    const started = await ok(laptop, ["recover", "start", bob.account.email, "--json"]);
    const code = started.json.code as string;
    const early = await ok(laptop, ["recover", "finish"]);
    expect(early.stdout).toMatch(/0 of 2 approvals/);

    // Carol approves through vaultctl: a wrong code is refused, the right one goes.
    const carolHome = home();
    await ok(carolHome, ["login", carol.account.email], `${SDK_PASSWORD}\n`);
    const tasks = await ok(carolHome, ["recovery", "tasks", "--json"]);
    expect(tasks.json).toEqual([expect.objectContaining({ requestId: started.json.requestId, email: bob.account.email })]);
    const mismatch = await vaultctl(["recovery", "approve", started.json.requestId, "--code", "0000-0000-0000-0000"], {
      server: server.url,
      home: carolHome,
      input: `${SDK_PASSWORD}\n`,
    });
    expect(mismatch.code).not.toBe(0);
    expect(mismatch.stderr).toMatch(/code/);
    const approved = await ok(carolHome, ["recovery", "approve", started.json.requestId, "--code", code, "--json"], `${SDK_PASSWORD}\n`);
    const { confirmation } = await alice.recovery.approve(started.json.requestId, code);
    expect(approved.json.confirmation).toBe(confirmation);

    const unconfirmed = await vaultctl(["recover", "finish"], {
      server: server.url,
      home: laptop,
      input: "a fresh horse staple battery\n",
    });
    expect(unconfirmed.stderr).toMatch(/--confirm/);
    const done = await ok(
      laptop,
      ["recover", "finish", "--confirm", confirmation],
      "a fresh horse staple battery\na fresh horse staple battery\n",
    );
    expect(done.stdout).toMatch(/Recovered/);
    expect((await ok(laptop, ["whoami", "--json"])).json).toMatchObject({ email: bob.account.email });
    const relogin = home();
    await ok(relogin, ["login", bob.account.email], "a fresh horse staple battery\n");
  });
});
