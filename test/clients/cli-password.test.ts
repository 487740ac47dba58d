/**
 * `vaultctl password change` and `password protect` on the real binary against the real server:
 * a plain change says what it leaves open; `--old-password-known` rotates the keys and rekeys the
 * vaults the user may, listing the one a colleague manages; `password protect` does it after a
 * plain change; opposite options are refused.
 */
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { VaultClient } from "../../sdk";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { vaultctl } from "../helpers/vaultctl";

jest.setTimeout(120_000);

const PASSWORD = "ivory tiger mango 42";
const SECOND = "lemon harbor violin 97";
const THIRD = "copper meadow lantern 55";
const FOURTH = "quiet orchard falcon 31";

describe("vaultctl password change, with and without cutting the old password off", () => {
  let server: TestServer;
  const home = tempDir("vaultctl-password-");
  const ada = `ada-${randomUUID().slice(0, 8)}@example.test`;
  const run = (args: string[], input = "") => vaultctl(args, { server: server.url, home, input });

  beforeAll(async () => {
    server = await startTestServer({ REGISTRATION_MODE: "open" });
    expect((await run(["register", ada, "--org-name", "Acme", "--kdf", "pbkdf2"], `${PASSWORD}\n`)).code).toBe(0);
    expect((await run(["vault", "create", "Diary", "--personal"], `${PASSWORD}\n`)).code).toBe(0);
    expect((await run(["vault", "create", "Team"], `${PASSWORD}\n`)).code).toBe(0);
    // Bob shares a vault of his with ada, as a member: hers to read, not to rekey.
    const sdk = new VaultClient({ baseUrl: server.url });
    await sdk.login(ada, PASSWORD);
    const bobEmail = `bob-${randomUUID().slice(0, 8)}@example.test`;
    const bob = new VaultClient({ baseUrl: server.url });
    await bob.register({ email: bobEmail, password: PASSWORD, invite: (await sdk.invites.create(bobEmail)).link, kdf: TEST_KDF });
    const bobs = await bob.vaults.create("Bob's", "shared");
    await bob.members.share(bobs.vaultId, sdk.account.userId, "member");
  });
  afterAll(async () => {
    await server.stop();
    fs.rmSync(home, { recursive: true, force: true });
  });

  test("in a script, without an option: the password only, and it says what the old one still opens", async () => {
    const changed = await run(["password", "change"], `${PASSWORD}\n${SECOND}\n`);
    expect([changed.code, changed.stderr]).toEqual([0, ""]);
    expect(changed.stdout).toMatch(/^Master password changed/);
    expect(changed.stdout).toContain("the old password, with a copy of the server's data from before this change, still opens them");
    expect(changed.stdout).toContain("vaultctl password protect");
  });

  test("opposite options are refused before anything is asked", async () => {
    const both = await run(["password", "change", "--old-password-known", "--old-password-safe", "--json"], `${SECOND}\n${THIRD}\n`);
    expect([both.code, both.error?.code]).toEqual([2, "USAGE"]);
  });

  test("--old-password-known: keys rotated, the personal and the owned vault rekeyed, bob's listed as left", async () => {
    const changed = await run(["password", "change", "--old-password-known", "--json"], `${SECOND}\n${THIRD}\n`);
    expect([changed.code, changed.stderr]).toEqual([0, ""]);
    expect(changed.json.protection.keyVersion).toBe(2);
    expect(changed.json.protection.rekeyed.map((v: { vaultName: string }) => v.vaultName).sort()).toEqual(["Diary", "Team"]);
    expect(changed.json.protection.left).toEqual([expect.objectContaining({ vaultName: "Bob's", reason: "not-a-manager" })]);
    // Every vault opens with the new password.
    expect((await run(["item", "add", "Diary", "Entry", "--field", "text=after"], `${THIRD}\n`)).code).toBe(0);
    expect((await run(["item", "get", "Diary", "Entry", "--field", "text"], `${THIRD}\n`)).stdout.trim()).toBe("after");
  });

  test("password protect: the second half alone, in words", async () => {
    expect((await run(["password", "change", "--old-password-safe"], `${THIRD}\n${FOURTH}\n`)).code).toBe(0);
    const done = await run(["password", "protect"], `${FOURTH}\n`);
    expect([done.code, done.stderr]).toEqual([0, ""]);
    expect(done.stdout).toMatch(/^Keys rotated \(key version 3; your fingerprint is now .+\); 2 vaults given a new key\./);
    expect(done.stdout).toContain("1 shared vault keeps its key");
    expect(done.stdout).toMatch(/ {2}Bob's: you are a member of "Bob's": ask one of its owners or admins to rekey it/);
  });
});
