/**
 * The real `vaultctl` binary (dist/cli/main.js, spawned as a process) against the real server:
 * output, exit codes and the state it leaves on disk are what a user and a script see.
 */
import fs from "node:fs";
import path from "node:path";
import { commands } from "../../cli/commands";
import { VaultClient } from "../../sdk";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { keepassFile } from "../helpers/keepass";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { vaultctl as run, type VaultctlRun } from "../helpers/vaultctl";
import { sleep } from "../helpers/wait";

type Run = VaultctlRun;

describe("vaultctl", () => {
  let server: TestServer;
  const homes = { alice: tempDir("vaultctl-alice-"), bob: tempDir("vaultctl-bob-"), carol: tempDir("vaultctl-carol-") };
  const sessions: Partial<Record<keyof typeof homes, string>> = {};

  /** Runs the binary as `who`, with their home and session; `input` goes to stdin. */
  function vaultctl(who: keyof typeof homes | undefined, args: string[], opts: { input?: string; env?: Record<string, string> } = {}) {
    return run(args, {
      server: server.url,
      home: who ? homes[who] : tempDir("vaultctl-nobody-"),
      session: who ? sessions[who] : undefined,
      ...opts,
    });
  }

  /** A command that must succeed. */
  async function ok(
    who: keyof typeof homes | undefined,
    args: string[],
    opts?: { input?: string; env?: Record<string, string> },
  ): Promise<Run> {
    const run = await vaultctl(who, args, opts);
    if (run.code !== 0) throw new Error(`vaultctl ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
    return run;
  }

  beforeAll(async () => {
    server = await startTestServer({ ACCESS_TOKEN_TTL: "3s" });
  });
  afterAll(async () => {
    await server.stop();
    for (const dir of Object.values(homes)) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("--help works for the whole tool and for every command, without a server or a login", async () => {
    const overview = await ok(undefined, ["--help"]);
    for (const c of commands) expect(overview.stdout).toContain(`${c.path.join(" ")}`);
    const helps = await Promise.all(
      commands.map((c) => vaultctl(undefined, [...c.path, "--help"], { env: { VAULT_SERVER: "http://127.0.0.1:1/api/v1" } })),
    );
    helps.forEach((run, i) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`usage: vaultctl ${commands[i]!.path.join(" ")}`);
      expect(run.stdout).toContain("--json");
    });
  });

  test("wrong usage exits 2 with a message on stderr, nothing on stdout", async () => {
    for (const args of [
      ["frobnicate"],
      ["vault", "create"],
      ["item", "add", "v", "n", "--no-such-option"],
      ["vault", "share", "v", "u", "--role", "owner"],
    ]) {
      const run = await vaultctl("alice", args);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/^error: /);
    }
    // Invite tokens are base64url and may start with "-": still a value, not an option.
    for (const args of [
      ["invite", "check", "-AbC_dEf-123"],
      ["register", "x@example.test", "--invite", "-AbC_dEf-123"],
    ]) {
      const run = await vaultctl(undefined, [...args, "--json"], { input: "pw\n" });
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stderr).error.code).toBe("NOT_FOUND");
    }
    const notLoggedIn = await vaultctl(undefined, ["vault", "list", "--json"]);
    expect(notLoggedIn.code).toBe(2);
    expect(JSON.parse(notLoggedIn.stderr)).toEqual({ error: { code: "USAGE", message: expect.stringMatching(/not logged in/) } });
  });

  test("the walkthrough: register, invite, unlock, share, items, remove, rekey, verify", async () => {
    // Alice is the server's first user: her own organization. The password comes on stdin.
    const reg = await ok("alice", ["register", "alice@example.test", "--org-name", "Acme", "--json"], { input: "ivory tiger mango 42\n" });
    expect(reg.json).toMatchObject({ email: "alice@example.test", role: "owner" });

    // Login state is the owner's only, and holds neither the password nor any key in the clear.
    expect(fs.statSync(homes.alice).mode & 0o777).toBe(0o700);
    for (const f of fs.readdirSync(homes.alice)) {
      expect(fs.statSync(path.join(homes.alice, f)).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(path.join(homes.alice, f), "utf8")).not.toContain("ivory tiger mango 42");
    }

    // Invites are signed with alice's key: she unlocks first (a wrong password exits 1).
    expect((await vaultctl("alice", ["unlock"], { input: "wrong\n" })).code).toBe(1);
    sessions.alice = (await ok("alice", ["unlock", "--raw"], { input: "ivory tiger mango 42\n" })).stdout.trim();
    const bobInvite = (await ok("alice", ["invite", "create", "bob@example.test", "--json"])).json;
    expect(bobInvite.link).toMatch(
      new RegExp(
        `^${server.url.replace(/\/api\/v1$/, "")}/#/invite/[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{22}$`,
      ),
    );
    const carolInvite = (await ok("alice", ["invite", "create", "carol@example.test", "--role", "admin", "--expires", "1h", "--json"]))
      .json;
    const list = await ok("alice", ["invite", "list"]);
    expect(list.stdout).toMatch(/bob@example\.test\s+member/);
    expect(list.stdout).toMatch(/carol@example\.test\s+admin/);
    const checked = (await ok(undefined, ["invite", "check", bobInvite.link])).stdout;
    expect(checked).toContain("Invite for bob@example.test as member");
    expect(checked).toContain("Checked: signed by alice@example.test");
    expect((await ok(undefined, ["invite", "check", bobInvite.token])).stdout).toContain("Not checked: this is a bare token");

    const pwFile = path.join(homes.bob, "..", `bob-pw-${process.pid}`);
    fs.writeFileSync(pwFile, "lunar kettle orbit 17\n", { mode: 0o600 });
    await ok("bob", ["register", "bob@example.test", "--invite", bobInvite.link, "--password-file", pwFile]);
    await ok("carol", ["register", "carol@example.test", "--invite", carolInvite.code, "--kdf", "pbkdf2", "--password-env", "CAROL_PW"], {
      env: { CAROL_PW: "cobalt ferry wander 8" },
    });
    // A used token is refused, readably.
    const reused = await vaultctl(undefined, ["invite", "check", bobInvite.token, "--json"]);
    expect(reused.code).toBe(1);
    expect(JSON.parse(reused.stderr).error.code).toBe("INVITE_NOT_REDEEMABLE");

    // unlock checks the password once and prints a session value.
    sessions.bob = (await ok("bob", ["unlock", "--raw", "--password-file", pwFile])).stdout.trim();
    sessions.carol = (await ok("carol", ["unlock", "--json"], { input: "cobalt ferry wander 8\n" })).json.session;
    expect(sessions.alice).toMatch(/^[A-Za-z0-9+/]{43}=$/);

    const vault = (await ok("alice", ["vault", "create", "Team", "--json"])).json;
    await ok("alice", ["vault", "share", "Team", "bob@example.test"]);
    await ok("alice", ["vault", "share", vault.vaultId, "carol@example.test", "--role", "admin"]);
    await ok("bob", ["item", "add", "Team", "GitHub", "--field", "username=bob", "--generate"]);
    await ok("carol", ["item", "add", "Team", "Wifi", "--field", "password=hunter2", "--field", "ssid=office"]);

    const password = (await ok("alice", ["item", "get", "Team", "GitHub", "--field", "password"])).stdout.trim();
    expect(password).toHaveLength(24);
    await ok("alice", ["item", "edit", "Team", "Wifi", "--field", "password=rotated", "--remove-field", "ssid"]);
    expect((await ok("bob", ["item", "get", "Team", "Wifi", "--json"])).json).toMatchObject({
      name: "Wifi",
      fields: { password: "rotated" },
      revision: 2,
    });
    expect((await ok("carol", ["item", "list", "Team", "--json"])).json.map((i: any) => i.name)).toEqual(["GitHub", "Wifi"]);
    const members = (await ok("alice", ["vault", "members", "Team"])).stdout;
    expect(members).toMatch(/bob@example\.test\s+member\s+alice@example\.test/);
    expect(members).toContain("Verified against the signed roster (link 2).");
    expect((await ok("bob", ["verify", "Team"])).stdout).toContain(`Vault "Team" (shared, key version 1): OK`);

    // Bob leaves the team: the server asks for a rekey. Alice leaves it for later (--no-rekey), so
    // nothing more is written under the key bob holds until carol (admin) rekeys.
    const removed = await ok("alice", ["vault", "remove", "Team", "bob@example.test", "--yes", "--no-rekey"]);
    expect(removed.stdout).toContain(
      `Rekey required: bob@example.test still holds the old key; nothing can be added or shared until then. Run: vaultctl rekey ${vault.vaultId}`,
    );
    const verifyBefore = await ok("alice", ["verify", "Team", "--json"]);
    expect(verifyBefore.json.warnings.join()).toMatch(/not been rekeyed/);
    const held = await vaultctl("carol", ["item", "add", "Team", "Too early", "--json"]);
    expect([held.code, JSON.parse(held.stderr).error.code]).toEqual([3, "REKEY_REQUIRED"]);
    const rekey = await ok("carol", ["rekey", "Team", "--progress"]);
    expect(rekey.stdout).toContain(`Rekeyed "Team": key version 2, 2 items re-encrypted, wrapped for 2 members.`);
    expect(rekey.stderr).toContain("re-encrypting items: 2/2 (100%)");
    expect(rekey.stderr).toContain("sending: 1/1 (100%)");

    const verify = await ok("alice", ["verify", "Team"]);
    expect(verify.stdout).toContain(`Vault "Team" (shared, key version 2): OK`);
    expect(verify.stdout).toContain("ok    alice@example.test (owner), wrapped by carol@example.test");
    expect((await ok("alice", ["vault", "list", "--json"])).json[0]).toMatchObject({ keyVersion: 2, rekeyRequired: false });

    // What bob could read: both items, neither changed since; the checklist clears one once it is edited.
    expect(removed.stdout).toContain(`What bob@example.test could read, to change: vaultctl exposure ${vault.vaultId} bob@example.test`);
    const exposure = (await ok("alice", ["exposure", "Team", "bob@example.test", "--json"])).json;
    expect(exposure.items.map((i: any) => i.status)).toEqual(["exposed", "exposed"]);
    const first = exposure.items[0].name;
    await ok("alice", ["item", "edit", "Team", first, "--generate"]);
    const after = await ok("alice", ["exposure", "Team", "bob@example.test"]);
    expect(after.stdout).toContain("1 secret to change (a change clears it):");
    expect(after.stdout).toMatch(new RegExp(`\\[x\\] +${first}`));

    // Bob's login still works, but the vault is gone for him.
    const gone = await vaultctl("bob", ["item", "list", vault.vaultId, "--json"]);
    expect(gone.code).not.toBe(0);
    // Bob's machine knew Team: it asks once (nothing it can verify says he was removed), until he confirms.
    const asked = await vaultctl("bob", ["vault", "list", "--json"]);
    expect([asked.code, JSON.parse(asked.stderr).error.code]).toEqual([3, "KNOWN_VAULT_MISSING"]);
    await ok("bob", ["vault", "forget", vault.vaultId, "--yes"]);
    expect((await ok("bob", ["vault", "list", "--json"])).json).toEqual([]);
    fs.rmSync(pwFile);
    // About forty processes, each deriving its key: past the minute of other tests on a loaded machine.
  }, 180_000);

  test("roster: the vault's signed history, readable; saved, it verifies offline, and a changed or cut copy exits 3", async () => {
    const shown = await ok("carol", ["roster", "Team"]);
    expect(shown.stdout).toMatch(/Signed roster of "Team": 5 links, all verified/);
    for (const line of [
      /0\s+\S+\s+alice@example\.test\s+created the shared vault "Team", as its owner/,
      /bob@example\.test\s+as member/,
      /removed bob@example\.test/,
      /carol@example\.test\s+rekeyed: key version 2, wrapped for 2 members/,
      /Members: alice@example\.test \(owner\), carol@example\.test \(admin\)/,
    ]) {
      expect(shown.stdout).toMatch(line);
    }
    const file = path.join(homes.alice, "team-roster.json");
    expect((await ok("alice", ["roster", "Team", "--save", file, "--json"])).json).toMatchObject({ signed: true, seq: 4, keyVersion: 2 });

    // Offline: no server to ask (an unreachable address), the file and this machine's pins only.
    const offline = { env: { VAULT_SERVER: "http://127.0.0.1:1/api/v1" } };
    expect((await ok("alice", ["verify", file], offline)).stdout).toContain(
      `Saved roster of "Team": OK, 5 links verified offline; members alice@example.test (owner), carol@example.test (admin)`,
    );
    const saved = JSON.parse(fs.readFileSync(file, "utf8"));
    const changed = path.join(homes.alice, "changed.json");
    fs.writeFileSync(
      changed,
      JSON.stringify({ ...saved, links: saved.links.map((l: any) => (l.seq === 1 ? { ...l, role: "admin" } : l)) }),
    );
    const forged = await vaultctl("alice", ["verify", changed, "--json"], offline);
    expect([forged.code, JSON.parse(forged.stderr).error.code]).toEqual([3, "BAD_SIGNATURE"]);
    // Cut before the removal: alice's machine saw link 4.
    fs.writeFileSync(changed, JSON.stringify({ ...saved, links: saved.links.slice(0, 3) }));
    const cut = await vaultctl("alice", ["verify", changed, "--json"], offline);
    expect([cut.code, JSON.parse(cut.stderr).error.code]).toEqual([3, "ROSTER_ROLLBACK"]);
    fs.rmSync(changed);
    fs.rmSync(file);
  });

  test("verify shows the vault's fingerprint, the same for two members; --compare with another exits 3", async () => {
    const alices = await ok("alice", ["verify", "Team", "--json"]);
    const carols = await ok("carol", ["verify", "Team", "--json"]);
    expect(alices.json.fingerprint).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){4}$/);
    expect(carols.json.fingerprint).toBe(alices.json.fingerprint);
    expect(alices.json.items).toMatchObject({ count: expect.any(Number) });
    const same = await ok("carol", ["verify", "Team", "--compare", alices.json.fingerprint.toUpperCase().replace(/ /g, "-")]);
    expect(same.stdout).toContain("(the same as the one you were given)");
    const other = await vaultctl("carol", ["verify", "Team", "--compare", "0000 0000 0000 0000 0000"]);
    expect(other.code).toBe(3);
    expect(other.stdout).toContain("FAIL  the fingerprint you were given (0000 0000 0000 0000 0000) is not this vault's");
  });

  test("audit: checked here; exported, it verifies offline against the pinned key, and a changed copy exits 3", async () => {
    const online = await ok("alice", ["audit", "verify"]);
    expect(online.stdout).toMatch(
      /^Audit log: OK, checked here: \d+ records, each hash recomputed and linked to the one before, none missing\./,
    );
    const file = path.join(homes.alice, "audit.json");
    await ok("alice", ["audit", "export", file]);
    const offline = { env: { VAULT_SERVER: server.url } };
    expect((await ok("alice", ["audit", "verify", file], offline)).stdout).toMatch(/^Audit log in .*: OK, checked offline: \d+ records/);
    const saved = JSON.parse(fs.readFileSync(file, "utf8"));
    fs.writeFileSync(file, JSON.stringify({ ...saved, records: saved.records.filter((r: any) => r.seq !== 2) }));
    const dropped = await vaultctl("alice", ["audit", "verify", file, "--json"], offline);
    expect([dropped.code, JSON.parse(dropped.stderr).error.code]).toEqual([3, "AUDIT_BROKEN"]);
    // A machine with no audit key pinned for the server needs one given.
    const stranger = await vaultctl(undefined, ["audit", "verify", file], offline);
    expect([stranger.code, stranger.stderr]).toEqual([2, expect.stringMatching(/no audit key is pinned/)]);
    fs.rmSync(file);
  });

  test("a changed key is refused (exit 3) until the new fingerprint is trusted", async () => {
    const pinsFile = path.join(homes.alice, "pins.json");
    const pins = JSON.parse(fs.readFileSync(pinsFile, "utf8"));
    const carolId = (await ok("carol", ["whoami", "--json"])).json.userId;
    const real = pins[server.url][carolId].fingerprint;
    // As if the server now handed out another key for carol: the pin no longer matches.
    pins[server.url][carolId] = "0000 ".repeat(15) + "0000";
    fs.writeFileSync(pinsFile, JSON.stringify(pins));

    const refused = await vaultctl("alice", ["item", "list", "Team", "--json"]);
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stderr).error.code).toBe("KEY_CHANGED");
    const verify = await vaultctl("alice", ["verify", "Team"]);
    expect(verify.code).toBe(3);
    expect(verify.stdout).toContain("PROBLEMS FOUND");
    expect((await ok("alice", ["keys", "carol@example.test"])).stdout).toContain("CHANGED");

    expect((await ok("carol", ["keys", "--json"])).json.fingerprint).toBe(real);
    await ok("alice", ["trust", "carol@example.test", real.replace(/ /g, "")]);
    expect((await ok("alice", ["keys", "carol@example.test"])).stdout).toContain("you checked it with them and trusted it");
    await ok("alice", ["item", "list", "Team"]);
  });

  test("a large vault: rekey reports progress by tenths and every item opens after", async () => {
    // 300 items added through the SDK (the same code the binary runs), then one rekey through the binary.
    const sdk = new VaultClient({ baseUrl: server.url });
    await sdk.login("carol@example.test", "cobalt ferry wander 8");
    const vault = await sdk.vaults.create("Big", "shared");
    for (let i = 0; i < 300; i++) await sdk.items.add(vault.vaultId, { name: `entry ${i}`, fields: { password: `pw-${i}` } });
    const run = await ok("carol", ["rekey", "Big", "--progress"]);
    const lines = run.stderr.split("\n").filter((l) => l.startsWith("re-encrypting items"));
    expect(lines).toEqual(Array.from({ length: 11 }, (_, t) => `re-encrypting items: ${t * 30}/300 (${t * 10}%)`));
    const items = (await ok("carol", ["item", "list", "Big", "--json"])).json;
    expect(items).toHaveLength(300);
    expect((await ok("carol", ["item", "get", "Big", "entry 299", "--field", "password"])).stdout.trim()).toBe("pw-299");
  });

  test("an expired access token is refreshed and the new pair saved; logout ends the login", async () => {
    const before = JSON.parse(fs.readFileSync(path.join(homes.bob, "login.json"), "utf8")).tokens.refreshToken;
    await sleep(3200);
    await ok("bob", ["whoami"]);
    const after = JSON.parse(fs.readFileSync(path.join(homes.bob, "login.json"), "utf8")).tokens.refreshToken;
    expect(after).not.toBe(before);
    await ok("bob", ["vault", "list"]);

    await ok("bob", ["logout"]);
    expect(fs.existsSync(path.join(homes.bob, "login.json"))).toBe(false);
    expect(fs.existsSync(path.join(homes.bob, "unlocked.json"))).toBe(false);
    expect((await vaultctl("bob", ["whoami"])).code).toBe(2);
    // The refresh token that was saved is dead on the server too.
    const res = await fetch(`${server.url}/auth/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refreshToken: after }),
    });
    expect(res.status).toBe(401);
  });

  test("rename, delete, revoke; a refusal by the server exits 1 with its error code", async () => {
    const vault = (await ok("alice", ["vault", "create", "Scratch", "--json"])).json;
    await ok("alice", ["vault", "share", "Scratch", "carol@example.test"]);
    const denied = await vaultctl("carol", ["vault", "rename", "Scratch", "Mine now", "--json"]);
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.stderr).error.code).toBe("FORBIDDEN");
    expect((await ok("alice", ["vault", "rename", vault.vaultId, "Renamed", "--json"])).json.vaultName).toBe("Renamed");

    const item = (await ok("carol", ["item", "add", "Renamed", "temp", "--json"])).json;
    const carolId = (await ok("carol", ["whoami", "--json"])).json.userId;
    const aliceId = (await ok("alice", ["whoami", "--json"])).json.userId;
    await ok("carol", ["item", "edit", "Renamed", "temp", "--field", "password=second"]);
    const history = (await ok("alice", ["item", "history", "Renamed", "temp", "--json"])).json;
    expect(history.map((r: any) => [r.revision, r.signedBy])).toEqual([[1, carolId]]);
    expect((await ok("alice", ["item", "history", "Renamed", "temp", "--revision", "1"])).stdout).not.toContain("second");
    expect((await ok("alice", ["item", "delete", "Renamed", "temp", "--yes"])).stdout).toContain(
      `Deleted "temp": it is in the vault's trash`,
    );
    const missing = await vaultctl("alice", ["item", "get", "Renamed", item.itemId]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no item "${item.itemId}"`);
    expect((await ok("carol", ["trash", "list", "Renamed", "--json"])).json.map((t: any) => [t.name, t.deletedBy])).toEqual([
      ["temp", aliceId],
    ]);
    expect((await ok("carol", ["trash", "restore", "Renamed", "temp"])).stdout).toContain(`Restored "temp" (revision 3).`);
    expect((await ok("alice", ["item", "revert", "Renamed", "temp", "1"])).stdout).toContain("now revision 4");
    await ok("alice", ["item", "delete", "Renamed", "temp", "--yes"]);
    expect((await ok("alice", ["trash", "purge", "Renamed", "temp", "--yes"])).stdout).toContain(`Purged "temp" for good.`);
    expect((await ok("alice", ["trash", "list", "Renamed"])).stdout).toContain("The trash is empty.");

    await ok("alice", ["vault", "delete", "Renamed", "--yes"]);
    // Alice's own delete forgets it on her machine; carol's, which knew it, asks once.
    expect((await ok("alice", ["vault", "list", "--json"])).json.map((v: any) => v.vaultName)).not.toContain("Renamed");
    expect((await vaultctl("carol", ["vault", "list", "--json"])).code).toBe(3);
    await ok("carol", ["vault", "forget", vault.vaultId, "--yes"]);
    expect((await ok("carol", ["vault", "list", "--json"])).json.map((v: any) => v.vaultName)).not.toContain("Renamed");

    const invite = (await ok("alice", ["invite", "create", "dora@example.test", "--json"])).json;
    expect((await ok("alice", ["invite", "revoke", invite.inviteId, "--yes"])).stdout).toContain(`Revoked invite ${invite.inviteId}.`);
    expect((await ok("alice", ["invite", "list", "--json"])).json.map((i: any) => i.id)).not.toContain(invite.inviteId);
    const revoked = await vaultctl(undefined, ["register", "dora@example.test", "--invite", invite.token, "--json"], {
      input: "dora-pw\n",
    });
    expect(revoked.code).toBe(1);
    expect(JSON.parse(revoked.stderr).error.code).toBe("INVITE_NOT_REDEEMABLE");
  });

  test("typed items: a login with two websites, a TOTP seed and custom fields, a card; the code matches one computed here; search finds 'github'", async () => {
    await ok("alice", ["vault", "create", "Typed"]);
    const seed = "JBSWY3DPEHPK3PXPJBSWY3DP";
    const login = (
      await ok("alice", [
        ...["item", "add", "Typed", "GitHub", "--field", "username=ada", "--url", "github.com", "--url", "gist.github.com"],
        ...["--url-match", "host", "--totp", seed, "--custom", "team=core", "--hidden", "pin=1234", "--favorite", "--json"],
      ])
    ).json;
    expect(login).toMatchObject({
      type: "login",
      urls: [
        { url: "https://github.com", match: "host" },
        { url: "https://gist.github.com", match: "host" },
      ],
      custom: [
        { name: "team", value: "core", hidden: false },
        { name: "pin", value: "1234", hidden: true },
      ],
      favorite: true,
    });
    expect((await ok("alice", ["item", "add", "Typed", "Visa", "--type", "card", "--field", "number=4111", "--json"])).json.type).toBe(
      "card",
    );
    expect((await vaultctl("alice", ["item", "add", "Typed", "x", "--type", "passport"])).code).toBe(2);
    const badSeed = await vaultctl("alice", ["item", "add", "Typed", "x", "--totp", "not a seed"]);
    expect([badSeed.code, badSeed.stderr]).toEqual([2, expect.stringContaining("--totp: a TOTP secret is base32")]);

    const before = referenceTotp(fromBase32(seed), Date.now());
    const { code, remaining } = (await ok("alice", ["item", "totp", "Typed", "GitHub", "--json"])).json;
    expect([before, referenceTotp(fromBase32(seed), Date.now())]).toContain(code);
    expect(remaining).toBeGreaterThan(0);
    const shown = (await ok("alice", ["item", "get", "Typed", "GitHub"])).stdout;
    expect(shown).toContain("website: https://gist.github.com (match: host)");
    expect(shown).toMatch(/one-time code: \d{6} \(\d+ s left\)/);

    const found = (await ok("alice", ["item", "search", "github", "--json"])).json;
    // Every vault alice can open: the walkthrough's Team has a GitHub item too.
    expect(found.items.map((i: any) => i.itemId)).toContain(login.itemId);
    expect(new Set(found.items.map((i: any) => i.name))).toEqual(new Set(["GitHub"]));
    expect(new Set(found.items.map((i: any) => i.vaultId)).size).toBe(2);
    expect((await ok("alice", ["item", "search", "visa", "--vault", "Typed", "--json"])).json.items.map((i: any) => i.type)).toEqual([
      "card",
    ]);
    expect((await ok("alice", ["item", "search", "nothing like it"])).stdout).toContain('No item matches "nothing like it".');
  });

  test("import a Bitwarden export and a KeePass database, export encrypted and import it again, export CSV only with --yes", async () => {
    const fixture = path.join(__dirname, "../fixtures/import/bitwarden.json");
    const imported = (await ok("alice", ["import", "Typed", fixture, "--json"])).json;
    expect(imported).toMatchObject({ imported: 5, format: "bitwarden-json", skipped: [{ name: "From the future" }] });
    const kdbx = path.join(homes.alice, "team.kdbx");
    fs.writeFileSync(kdbx, await keepassFile("kp-pass"));
    const kp = await ok("alice", ["import", "Typed", kdbx, "--password-env", "KP_PASS"], { env: { KP_PASS: "kp-pass" } });
    expect(kp.stdout).toContain('Imported 2 items (0 with parts left out) into "Typed" from a keepass file (1 request); skipped 1.');
    expect(kp.stdout).toContain("Attached 1 file to the items imported.");
    const wrong = await vaultctl("alice", ["import", "Typed", kdbx, "--password-env", "KP_PASS"], { env: { KP_PASS: "nope" } });
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringContaining("the KeePass password (or key file) is wrong")]);
    // A vault per top-level group of a real KeePass database, each named after it; the vault named on the line gets none (no entry is outside a group).
    const groups = path.join(__dirname, "../fixtures/import/keepass/keeweb-Demo.kdbx");
    const perGroup = await ok("alice", ["import", "Typed", groups, "--vault-per-folder", "--password-env", "KP_PASS"], {
      env: { KP_PASS: "demo" },
    });
    expect(perGroup.stdout).toMatch(
      /^Imported 19 items \(2 with parts left out\) into "Computer", "Internet", "Finance" from a keepass file/,
    );
    for (const [group, count] of [
      ["Computer", 7],
      ["Internet", 9],
      ["Finance", 3],
    ] as const)
      expect([group, (await ok("alice", ["item", "list", group, "--json"])).json.length]).toEqual([group, count]);

    const out = path.join(homes.alice, "typed.export");
    await ok("alice", ["export", "Typed", "--out", out, "--passphrase-env", "EXPORT_PASS"], {
      env: { EXPORT_PASS: "a long export passphrase" },
    });
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(out, "utf8")).not.toContain("GitHub");
    await ok("alice", ["vault", "create", "Restored"]);
    const back = (
      await ok("alice", ["import", "Restored", out, "--password-env", "EXPORT_PASS", "--json"], {
        env: { EXPORT_PASS: "a long export passphrase" },
      })
    ).json;
    const typed = (await ok("alice", ["item", "list", "Typed", "--json"])).json.map((i: any) => i.name).sort();
    expect(back.imported).toBe(typed.length);
    expect((await ok("alice", ["item", "list", "Restored", "--json"])).json.map((i: any) => i.name).sort()).toEqual(typed);

    const again = await vaultctl("alice", ["export", "Typed", "--out", out, "--format", "csv", "--yes"]);
    expect([again.code, again.stderr]).toEqual([2, expect.stringContaining("exists")]);
    const csv = path.join(homes.alice, "typed.csv");
    const unconfirmed = await vaultctl("alice", ["export", "Typed", "--out", csv, "--format", "csv"], { input: "n\n" });
    expect(unconfirmed.code).not.toBe(0);
    expect(fs.existsSync(csv)).toBe(false);
    await ok("alice", ["export", "Typed", "--out", csv, "--format", "csv", "--yes"]);
    expect(fs.readFileSync(csv, "utf8")).toContain("GitHub");
  });

  test("lock makes every session value useless", async () => {
    await ok("alice", ["lock"]);
    const run = await vaultctl("alice", ["item", "list", "Team"], { input: "" });
    expect(run.code).not.toBe(0);
    sessions.alice = (await ok("alice", ["unlock", "--raw"], { input: "ivory tiger mango 42\n" })).stdout.trim();
    await ok("alice", ["item", "list", "Team"]);
  });

  // Last: carol leaves the organization for good.
  test("org remove: carol is out, her sessions end, and the vaults alice manages are rekeyed with a progress bar", async () => {
    const shared = (await ok("alice", ["vault", "create", "Leaving", "--json"])).json;
    await ok("alice", ["vault", "share", "Leaving", "carol@example.test"]);
    expect((await vaultctl("carol", ["org", "remove", "alice@example.test", "--yes", "--json"])).code).toBe(1);
    const script = await vaultctl("alice", ["org", "remove", "carol@example.test", "--json"]);
    expect([script.code, JSON.parse(script.stderr).error.code]).toEqual([2, "USAGE"]);
    const out = await ok("alice", ["org", "remove", "carol@example.test", "--yes"]);
    expect(out.stdout).toMatch(/^carol@example\.test is out of the organization; \d+ sessions? ended\.\n\d+ vaults? rekeyed/);
    expect((await ok("alice", ["vault", "members", shared.vaultId, "--json"])).json.map((m: any) => m.email)).not.toContain(
      "carol@example.test",
    );
    const refused = await vaultctl("carol", ["vault", "list", "--json"]);
    expect(refused.code).toBe(1);
  });
});
