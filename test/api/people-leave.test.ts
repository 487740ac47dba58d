/**
 * People leave, with the real SDK against the real service, on SQLite and PostgreSQL:
 * an owner or admin takes a person out of the organization (or they leave). Their sessions end
 * and every vault refuses them at once; the answer lists their vaults and what each needs; the
 * SDK then signs their `remove` link and rekeys each shared vault the caller manages, and the
 * vaults' owners finish the rest. The last owner of the organization, or of a shared vault others
 * are in, stays.
 */
import { randomUUID } from "node:crypto";
import { ApiError, VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(180_000);

const PASSWORD = "correct horse battery staple";

describe.each(SQL_ENGINES)("people leave, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open" });
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    return [(err as ApiError).status, (err as ApiError).code, (err as ApiError).field];
  };

  /** An organization: its owner, and people invited to it. */
  async function org(roles: Array<"admin" | "member">) {
    const owner = new VaultClient({ baseUrl: server.url });
    await owner.register({ email: `owner-${randomUUID().slice(0, 8)}@example.test`, password: PASSWORD, kdf: TEST_KDF, orgName: "Acme" });
    const people: VaultClient[] = [];
    for (const role of roles) {
      const email = `${role}-${randomUUID().slice(0, 8)}@example.test`;
      const invite = await owner.invites.create(email, role);
      const person = new VaultClient({ baseUrl: server.url });
      await person.register({ email, password: PASSWORD, kdf: TEST_KDF, invite: invite.code });
      people.push(person);
    }
    return { owner, people };
  }

  test("a member taken out: refused at once everywhere; their vaults listed; the owner's own rekeyed, the others' left to their owners", async () => {
    const { owner: ada, people } = await org(["member", "admin", "member"]);
    const [bob, cy, dee] = people as [VaultClient, VaultClient, VaultClient];
    const bobId = bob.account.userId;
    const team = await ada.vaults.create("Team");
    await ada.items.add(team.vaultId, { name: "GitHub", fields: { password: "team secret" } });
    await ada.members.share(team.vaultId, bobId);
    const cys = await cy.vaults.create("Cy's");
    await cy.members.share(cys.vaultId, bobId);
    const bobs = await bob.vaults.create("Bob owns");
    await bob.members.share(bobs.vaultId, dee.account.userId);
    const alone = await bob.vaults.create("Bob alone");
    const diary = await bob.vaults.create("Diary", "personal");

    // Who may not: a member, an admin for an owner, the last owner for herself, anyone for a stranger.
    expect(await refusal(dee.people.remove(bobId))).toEqual([403, "FORBIDDEN", undefined]);
    expect(await refusal(cy.people.remove(ada.account.userId))).toEqual([403, "FORBIDDEN", undefined]);
    expect(await refusal(ada.people.remove(ada.account.userId))).toEqual([400, "INVALID", undefined]);
    const stranger = (await org([])).owner;
    expect(await refusal(ada.people.remove(stranger.account.userId))).toEqual([404, "NOT_FOUND", undefined]);
    // Bob is the last owner of a vault dee is in: refused whole, until he names another owner there.
    expect(await refusal(ada.people.remove(bobId))).toEqual([400, "INVALID", "vaults"]);
    await bob.members.changeRole(bobs.vaultId, dee.account.userId, "owner");

    const removal = await ada.people.remove(bobId);
    expect(removal.sessionsEnded).toBeGreaterThanOrEqual(1);
    expect(Object.fromEntries(removal.vaults.map((v) => [v.vaultId, v.needs]))).toEqual({
      [team.vaultId]: "rekey",
      [cys.vaultId]: "rekey",
      [bobs.vaultId]: "rekey",
      [alone.vaultId]: "none",
      [diary.vaultId]: "none",
    });
    // Bob: his session is over, and he cannot sign in again.
    expect(await refusal(bob.vaults.list())).toEqual([401, "UNAUTHORIZED", undefined]);
    expect(await refusal(new VaultClient({ baseUrl: server.url }).login(bob.account.email, PASSWORD))).toEqual([
      403,
      "FORBIDDEN",
      undefined,
    ]);
    // The organization lists him as removed; nothing is shared with him any more; removing him again is 404.
    const listed = (await ada.people.list()).find((m) => m.userId === bobId)!;
    expect(listed.removedAt).toEqual(expect.any(String));
    const other = await ada.vaults.create("Later");
    expect(await refusal(ada.members.share(other.vaultId, bobId))).toEqual([404, "NOT_FOUND", undefined]);
    expect(await refusal(ada.people.remove(bobId))).toEqual([404, "NOT_FOUND", undefined]);

    // Ada finishes what she manages: Team gets Bob's signed remove link and a new key; the others are their owners'.
    const steps: string[] = [];
    const finished = await ada.people.finishRemoval(removal, {
      onProgress: (vaultId, _i, _n, step) => steps.push(`${vaultId}:${step.phase}`),
    });
    expect(finished.rekeyed).toEqual([team.vaultId]);
    expect(finished.left.map((l) => l.vaultId).sort()).toEqual([cys.vaultId, bobs.vaultId].sort());
    expect(steps).toContain(`${team.vaultId}:upload`);
    const teamNow = await ada.vaults.get(team.vaultId);
    expect(teamNow.keyVersion).toBe(2);
    expect((await ada.members.list(team.vaultId)).map((m) => m.userId)).not.toContain(bobId);
    expect((await ada.members.roster(team.vaultId))!.links.map((l) => l.op).slice(-2)).toEqual(["remove", "rekey"]);
    expect((await ada.items.list(team.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);
    expect((await cy.people.finishRemoval(removal)).rekeyed).toEqual([cys.vaultId]);
    expect((await dee.people.finishRemoval(removal)).rekeyed).toEqual([bobs.vaultId]);
  });

  test("a dishonest answer naming someone else as removed is refused, and nothing is rekeyed on its word", async () => {
    const { owner: ada, people } = await org(["member", "member"]);
    const [bob, cy] = people as [VaultClient, VaultClient];
    const lying = new VaultClient({
      baseUrl: server.url,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (init?.method !== "DELETE" || !String(input).includes("/members/") || res.status !== 200) return res;
        const body = (await res.json()) as { userId: string };
        return new Response(JSON.stringify({ ...body, userId: cy.account.userId }), { status: 200, headers: res.headers });
      },
    });
    await lying.login(ada.account.email, PASSWORD);
    await expect(lying.people.remove(bob.account.userId)).rejects.toMatchObject({ code: "INCONSISTENT" });
    // Cy is untouched: still in, still signed in.
    expect((await cy.vaults.list()).length).toBeGreaterThanOrEqual(0);
    expect((await ada.people.list()).find((m) => m.userId === cy.account.userId)?.removedAt).toBeUndefined();
  });

  test("a person leaves: their sessions end; the organization goes on", async () => {
    const { owner: ada, people } = await org(["admin"]);
    const [cy] = people as [VaultClient];
    const team = await ada.vaults.create("Team");
    await ada.members.share(team.vaultId, cy.account.userId, "admin");
    const left = await cy.people.remove(cy.account.userId);
    expect(left.vaults).toEqual([{ vaultId: team.vaultId, needs: "rekey" }]);
    expect(await refusal(cy.vaults.list())).toEqual([401, "UNAUTHORIZED", undefined]);
    expect((await ada.people.finishRemoval(left)).rekeyed).toEqual([team.vaultId]);
  });

  test("a removal racing the removed person's writes: every write answered 201 is there, every other is not (real concurrency)", async () => {
    const { owner: ada, people } = await org(["member"]);
    const [bob] = people as [VaultClient];
    const team = await ada.vaults.create("Team");
    await ada.members.share(team.vaultId, bob.account.userId);
    await bob.items.list(team.vaultId);
    const written: string[] = [];
    const refused: string[] = [];
    let n = 0;
    const writes = (async () => {
      for (;;) {
        const name = `bob ${n++}`;
        try {
          await bob.items.add(team.vaultId, { name, fields: { note: name } });
          written.push(name);
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          refused.push(name);
          return;
        }
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 150));
    await ada.people.remove(bob.account.userId);
    await writes;
    expect(refused).toHaveLength(1);
    const names = (await ada.items.list(team.vaultId)).map((i) => i.name);
    expect(names.sort()).toEqual([...written].sort());
  });
});
