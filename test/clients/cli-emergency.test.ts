/**
 * Emergency access through the real `vaultctl` (dist/cli/main.js) against the real service, behind
 * a proxy that records every request (test/helpers/dishonest-proxy.ts), with the server's clock
 * moved past the wait: a grant to a member whose keys were not compared is refused with what to
 * run, and nothing is sent; after `trust`, both sides list it; the grantee asks, the grantor (told
 * at unlock) refuses, the grantee asks again; after the wait `open` reads the grantor's items,
 * passwords only when asked for. A takeover grant sets a new password the grantor's account then
 * opens with, and refuses `open`.
 */
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { dishonestSuite, writesIn } from "../helpers/dishonest-proxy";
import { tempDir } from "../helpers/server";
import { vaultctl, type VaultctlRun } from "../helpers/vaultctl";

jest.setTimeout(240_000);

const HOUR = 3_600_000;
const NEW_PASSWORD = "a brand new horse staple battery";
const address = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

describe("vaultctl: emergency access", () => {
  const suite = dishonestSuite(SQL_ENGINES[0]![1]);
  const homes = { ada: tempDir("vaultctl-emergency-ada-"), ben: tempDir("vaultctl-emergency-ben-") };
  type Who = keyof typeof homes;
  const sessions: Partial<Record<Who, string>> = {};
  const emails = { ada: address("ada"), ben: address("ben") };
  let admin: VaultClient;

  const run = (who: Who, args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
    vaultctl(args, { server: suite.proxy.url, home: homes[who], session: sessions[who], ...opts });
  async function ok(who: Who, args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<VaultctlRun> {
    const done = await run(who, args, opts);
    if (done.code !== 0) throw new Error(`vaultctl ${args.join(" ")} exited ${done.code}: ${done.stderr}`);
    return done;
  }
  /** A member invited by the admin through the SDK: nothing on the CLI's machines vouches for their keys. */
  async function invite(email: string): Promise<string> {
    return (await admin.invites.create(email, "member")).code;
  }

  beforeAll(async () => {
    admin = new VaultClient({ baseUrl: suite.proxy.url });
    await admin.register({ email: address("admin"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    for (const who of ["ada", "ben"] as const) {
      const code = await invite(emails[who]);
      await ok(who, ["register", emails[who], "--invite", code, "--kdf", "pbkdf2"], { input: `${SDK_PASSWORD}\n` });
      sessions[who] = (await ok(who, ["unlock", "--raw"], { input: `${SDK_PASSWORD}\n` })).stdout.trim();
    }
    const vault = (await ok("ada", ["vault", "create", "Personal", "--personal", "--json"])).json.vaultId;
    await ok("ada", ["item", "add", vault, "bank", "--field", "username=ada.l", "--field", "password=hunter2-vault"]);
  });
  afterAll(() => {
    for (const dir of Object.values(homes)) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a grant to a member whose keys were not compared is refused, naming `vaultctl trust`, with nothing sent", async () => {
    const from = suite.proxy.sent.length;
    const refused = await run("ada", ["emergency", "grant", emails.ben, "--level", "read", "--wait", "2"]);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`compare fingerprints with them first (\`vaultctl keys ${emails.ben}\` here`);
    expect(refused.stderr).toContain(`then \`vaultctl trust ${emails.ben} <fingerprint>\`, and grant again [EMERGENCY_GRANTEE_UNVERIFIED]`);
    expect(writesIn(suite.proxy.sent.slice(from))).toEqual([]);
    for (const bad of [
      ["--level", "admin", "--wait", "2"],
      ["--level", "read", "--wait", "91"],
      ["--level", "read"],
    ]) {
      const wrong = await run("ada", ["emergency", "grant", emails.ben, ...bad]);
      expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringMatching(/--level is read or takeover|--wait takes the days/)]);
    }
  });

  test("after trust: listed on both sides; asked, refused, asked again; after the wait `open` reads the grantor's items", async () => {
    // They compare fingerprints, each on the other's machine.
    await ok("ada", ["trust", emails.ben, (await ok("ben", ["keys", "--json"])).json.fingerprint]);
    await ok("ben", ["trust", emails.ada, (await ok("ada", ["keys", "--json"])).json.fingerprint]);
    const made = await ok("ada", ["emergency", "grant", emails.ben, "--level", "read", "--wait", "2"]);
    const grantId = /\(grant ([0-9a-f-]{36})\)/.exec(made.stdout)![1]!;
    expect(made.stdout).toContain(`${emails.ben} may read your vaults 2 days after asking`);

    expect((await ok("ada", ["emergency", "list", "--json"])).json).toEqual({
      granted: [expect.objectContaining({ grantId, email: emails.ben, level: "read", waitHours: 48, status: "idle" })],
      received: [],
    });
    const benList = (await ok("ben", ["emergency", "list"])).stdout;
    expect(benList).toMatch(/You grant:\n\(none\)\n\nGranted to you:\nGRANT\s+FROM\s+LEVEL\s+WAIT\s+STATUS\s+OPENS\n/);
    expect(benList).toMatch(new RegExp(`${grantId}\\s+${emails.ada}\\s+read\\s+2 days\\s+idle`));
    const early = await run("ben", ["emergency", "open", grantId]);
    expect([early.code, early.stderr]).toEqual([1, expect.stringMatching(/is idle: ask first \(vaultctl emergency request/)]);

    const asked = await ok("ben", ["emergency", "request", grantId]);
    expect(asked.stdout).toMatch(/Asked ada-.* for read access to their account: it opens at \S+ unless they refuse/);
    // The grantor sees it highlighted, with what stops it, in the list and at unlock.
    const adaList = (await ok("ada", ["emergency", "list"])).stdout;
    expect(adaList).toMatch(new RegExp(`${grantId}\\s+${emails.ben}\\s+read\\s+2 days\\s+! waiting\\s+\\S+`));
    expect(adaList).toContain(`! ${emails.ben} asked for read access to your account: it opens at`);
    expect(adaList).toContain(`vaultctl emergency refuse ${grantId}`);
    const unlocked = await ok("ada", ["unlock", "--raw"], { input: `${SDK_PASSWORD}\n` });
    sessions.ada = unlocked.stdout.trim();
    expect(unlocked.stderr).toContain(`Emergency access: ${emails.ben} asked for read access to your account`);

    expect((await ok("ada", ["emergency", "refuse", grantId])).stdout).toMatch(/^Refused ben-.*'s request: nothing opens/);
    expect((await ok("ben", ["emergency", "list", "--json"])).json.received[0]).toMatchObject({ grantId, status: "idle" });
    await ok("ben", ["emergency", "request", grantId]);
    const waiting = await run("ben", ["emergency", "open", grantId]);
    expect([waiting.code, waiting.stderr]).toEqual([1, expect.stringMatching(/opens at \S+, unless ada-.* refuses first/)]);

    suite.server.clock.advance(48 * HOUR);
    const opened = await ok("ben", ["emergency", "open", grantId]);
    expect(opened.stdout).toContain(`${emails.ada}'s vaults, read as them (read only):`);
    expect(opened.stdout).toMatch(/Vault "Personal" \([0-9a-f-]{36}\):\nID\s+NAME\s+USERNAME\n\S+\s+bank\s+ada\.l\n?$/);
    expect(opened.stdout).not.toContain("hunter2-vault");
    expect(opened.stderr).toContain("--show-passwords prints them");
    const shown = await ok("ben", ["emergency", "open", grantId, "--show-passwords", "--json"]);
    expect(shown.json.vaults[0].items).toEqual([expect.objectContaining({ name: "bank", username: "ada.l", password: "hunter2-vault" })]);
    // Ben's machine is still Ben's: nothing of Ada's session was saved as his login.
    expect((await ok("ben", ["whoami", "--json"])).json.email).toBe(emails.ben);
  });

  test("a takeover grant: `open` points to `takeover`, which sets a new password the grantor's account opens with", async () => {
    const cyEmail = address("cy");
    const cy = new VaultClient({ baseUrl: suite.proxy.url });
    await cy.register({ email: cyEmail, password: SDK_PASSWORD, invite: await invite(cyEmail), kdf: TEST_KDF, rsaBits: 2048 });
    const vault = await cy.vaults.create("Cy's", "personal");
    await cy.items.add(vault.vaultId, { name: "mail", fields: { username: "cy", password: "cy-secret-9" } });
    const benId = (await ok("ben", ["whoami", "--json"])).json.userId;
    await cy.keys.trust(benId, (await ok("ben", ["keys", "--json"])).json.fingerprint, emails.ben);
    await ok("ben", ["trust", cyEmail, await cy.keys.own()]);
    const { grantId } = await cy.emergency.grant(benId, { level: "takeover", waitHours: 24 });

    await ok("ben", ["emergency", "request", grantId]);
    suite.server.clock.advance(24 * HOUR);
    const open = await run("ben", ["emergency", "open", grantId]);
    expect([open.code, open.stderr]).toEqual([2, expect.stringContaining(`vaultctl emergency takeover ${grantId}`)]);
    const unasked = await run("ben", ["emergency", "takeover", grantId]);
    expect([unasked.code, unasked.stderr]).toEqual([2, expect.stringMatching(/--new-password-file or --new-password-env/)]);

    const env = { NEW_PW: NEW_PASSWORD };
    const done = await ok("ben", ["emergency", "takeover", grantId, "--new-password-env", "NEW_PW", "--yes"], { env });
    expect(done.stdout).toContain(`${cyEmail} now has the new master password`);
    expect(done.stdout).toMatch(/Every other session of the account ended \(1 session\)/);
    // Cy's own session ended; the new password opens the account and its items.
    await expect(cy.vaults.list()).rejects.toMatchObject({ status: 401 });
    const again = new VaultClient({ baseUrl: suite.proxy.url });
    await again.login(cyEmail, NEW_PASSWORD);
    expect((await again.items.list(vault.vaultId)).map((i) => i.fields.password)).toEqual(["cy-secret-9"]);
    expect((await ok("ben", ["emergency", "list", "--json"])).json.received.map((g: any) => g.grantId)).not.toContain(grantId);
  });
});
