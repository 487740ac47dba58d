/**
 * Sends over HTTP on SQLite and PostgreSQL, with real SDK clients and the server as it runs: a text
 * opened by its link by someone with no account while the server (a recording proxy) sees no key,
 * password or text; fifty opens at once of a one-view send, exactly one of them shown; a file behind
 * a password, wrong guesses refused then rate-limited; an expired or deleted send answering 404 with
 * its bytes gone from the database; the limits and the organization's policies; the audit records.
 */
import { createHash, randomBytes } from "node:crypto";
import { ApiError, openSend, parseSendLink, type VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { deriveSendKeys } from "../../protocol/formats/sends";
import { SQL_ENGINES } from "../helpers/postgres";
import { startTestServer, type TestServer } from "../helpers/server";
import { ownerAndAdmin } from "../helpers/sdk";
import { startDishonestProxy, type DishonestProxy } from "../helpers/dishonest-proxy";
import { sendRows } from "../helpers/send-rows";
import { eventually } from "../helpers/wait";
import { sendPasswordRateLimited, sendPasswordRequired, sendPasswordWrong } from "../../lib/domain/sends/refusals";

jest.setTimeout(240_000);

const KIB = 1024;
const MIB = 1024 * KIB;

async function refusal(attempt: Promise<unknown>): Promise<ApiError> {
  const err = await attempt.then(
    () => {
      throw new Error("it was not refused");
    },
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw err;
  return err;
}

describe.each(SQL_ENGINES)("sends, on %s", (_engine, openStore) => {
  let server: TestServer;
  let env: Record<string, string>;
  let proxy: DishonestProxy;
  let drop: () => Promise<void>;
  let alice: VaultClient;
  let carol: VaultClient;
  const open = (link: string, opts: { password?: string } = {}) => openSend(link, { ...opts, apiUrl: server.url });

  beforeAll(async () => {
    const store = await openStore();
    drop = store.drop;
    env = {
      ...store.env,
      SEND_MAX_BYTES: String(4 * MIB),
      SEND_MAX_PER_USER: "6",
      LOGIN_MAX_FAILURES: "3",
      SEND_OPEN_RATE_LIMIT: "1000",
      TRUST_PROXY: "1",
    };
    server = await startTestServer(env);
    proxy = await startDishonestProxy(new URL(server.url).origin);
    ({ alice, carol } = await ownerAndAdmin(proxy.url));
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    await drop?.();
  });

  test("a text opens by its link for someone with no account; the server never saw the secret, the password, the title or the text", async () => {
    proxy.sent.length = 0;
    const text = `db-root: ${randomBytes(12).toString("hex")}`;
    const made = await alice.sends.create({ text }, { title: "Production database", password: "tulip season", showEmail: true });
    const { secret } = parseSendLink(made.link)!;
    const opened = await openSend(made.link, { password: "tulip season", apiUrl: proxy.url });
    expect(opened).toMatchObject({ kind: "text", text, title: "Production database", from: alice.account.email, viewsLeft: null });

    const wire = JSON.stringify(proxy.sent);
    for (const kept of [
      Buffer.from(secret).toString("base64url"),
      toBase64(secret),
      Buffer.from(secret).toString("hex"),
      "tulip season",
      text,
      "Production database",
    ])
      expect(wire).not.toContain(kept);
    // The recipient's requests were the open and nothing else of the key.
    expect(proxy.sent.filter((r) => r.path.startsWith(`/sends/${made.sendId}/open`))).toHaveLength(1);

    // The sender's list opens its own note: the title and the very link.
    const mine = (await alice.sends.list()).find((s) => s.sendId === made.sendId)!;
    expect(mine).toMatchObject({
      title: "Production database",
      kind: "text",
      link: made.link,
      views: 1,
      hasPassword: true,
      complete: true,
    });
    expect((await carol.sends.list()).map((s) => s.sendId)).not.toContain(made.sendId);
  });

  test("a send's id without its link's secret (seen in a log, say) is answered as no send: no view taken, no password guess counted", async () => {
    const made = await alice.sends.create({ text: "only for the link's holder" }, { maxViews: 1, password: "pebble" });
    const byId = (accessProof: string | undefined, passwordProof?: string) =>
      fetch(`${server.url}/sends/${made.sendId}/open`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...(accessProof && { accessProof }), ...(passwordProof && { passwordProof }) }),
      });
    const guess = toBase64(new Uint8Array(randomBytes(32)));
    expect((await byId(undefined)).status).toBe(400);
    for (let i = 0; i < 5; i++) expect((await byId(guess, guess)).status).toBe(404);
    // The holder of the link is neither out of views nor rate-limited.
    expect((await open(made.link, { password: "pebble" })).text).toBe("only for the link's holder");
  });

  test("a file's parts are read only with an open's access for that very send", async () => {
    const data = new Uint8Array(randomBytes(1.5 * MIB));
    const [a, b] = [await alice.sends.create({ file: { name: "a", data } }), await alice.sends.create({ file: { name: "b", data } })];
    const keysOf = async (link: string) => (await deriveSendKeys(parseSendLink(link)!.secret, parseSendLink(link)!.sendId)).accessProof;
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const openedA = (await (await post(`/sends/${a.sendId}/open`, { accessProof: toBase64(await keysOf(a.link)) })).json()) as {
      access: string;
    };
    expect((await post(`/sends/${a.sendId}/parts/1/read`, { access: openedA.access })).status).toBe(200);
    for (const access of [openedA.access, "s1.bogus.value", "x"]) {
      const res = await post(`/sends/${b.sendId}/parts/1/read`, { access });
      expect(res.status).toBe(401);
    }
  });

  test("fifty opens at once of a one-view send: exactly one is shown it, the others 404, and its bytes are gone", async () => {
    const made = await alice.sends.create({ text: "the one-time recovery phrase" }, { maxViews: 1 });
    // Fifty recipients, each at an address of their own (as the proxy in front reports them).
    const from =
      (i: number): typeof fetch =>
      (input, init) =>
        fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), "x-forwarded-for": `10.1.0.${i}` } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => openSend(made.link, { apiUrl: server.url, fetch: from(i) })),
    );
    const shown = outcomes.filter((o) => o.status === "fulfilled");
    expect(shown).toHaveLength(1);
    expect((shown[0] as PromiseFulfilledResult<{ text?: string; viewsLeft: number | null }>).value).toMatchObject({
      text: "the one-time recovery phrase",
      viewsLeft: 0,
    });
    for (const o of outcomes.filter((x) => x.status === "rejected"))
      expect((o as PromiseRejectedResult).reason).toMatchObject({ status: 404 });
    expect(await sendRows(server, made.sendId)).toEqual({ sends: 1, parts: 0, partBytes: 0 });
    expect((await alice.sends.list()).find((s) => s.sendId === made.sendId)).toMatchObject({ views: 1, maxViews: 1, partsGone: true });
  });

  test("a file behind a password: a wrong one is refused, guesses are rate-limited, the right one reads it byte for byte", async () => {
    const data = new Uint8Array(randomBytes(2 * MIB + 321));
    const made = await alice.sends.create({ file: { name: "keys.tar", type: "application/x-tar", data } }, { password: "open sesame 42" });
    expect(await refusal(open(made.link))).toMatchObject({ status: 401, field: "passwordProof", message: sendPasswordRequired().message });
    for (let i = 0; i < 3; i++)
      expect(await refusal(open(made.link, { password: `guess ${i}` }))).toMatchObject({
        status: 401,
        message: sendPasswordWrong().message,
      });
    // LOGIN_MAX_FAILURES (3) for this send from this address: even the right password waits now.
    const limited = await refusal(open(made.link, { password: "open sesame 42" }));
    expect(limited).toMatchObject({ status: 429, message: sendPasswordRateLimited("email-and-address", 1).message });
    server.clock.advance(16 * 60_000);
    const opened = await open(made.link, { password: "open sesame 42" });
    expect(opened.file).toMatchObject({ name: "keys.tar", type: "application/x-tar", size: data.length });
    expect(createHash("sha256").update(opened.file!.data).digest("hex")).toBe(createHash("sha256").update(data).digest("hex"));
  });

  test("an expired send answers 404 at once, and the sweeper deletes its bytes", async () => {
    const made = await alice.sends.create({ file: { name: "a.bin", data: new Uint8Array(randomBytes(300 * KIB)) } }, { expiresIn: "1h" });
    expect((await sendRows(server, made.sendId)).partBytes).toBeGreaterThan(300 * KIB);
    server.clock.advance(60 * 60_000 + 1_000);
    expect(await refusal(open(made.link))).toMatchObject({ status: 404, code: "NOT_FOUND" });
    expect((await alice.sends.list()).map((s) => s.sendId)).not.toContain(made.sendId);
    await server.node.broker.call("sweeper.sweep");
    expect(await sendRows(server, made.sendId)).toEqual({ sends: 0, parts: 0, partBytes: 0 });
  });

  test("a deleted send answers 404, its bytes gone at once; only its sender may delete it", async () => {
    const made = await alice.sends.create({ text: "wifi: correct-horse" });
    expect(await refusal(carol.sends.remove(made.sendId))).toMatchObject({ status: 404 });
    await alice.sends.remove(made.sendId);
    expect(await refusal(open(made.link))).toMatchObject({ status: 404 });
    expect(await sendRows(server, made.sendId)).toEqual({ sends: 0, parts: 0, partBytes: 0 });
  });

  test("the limits: SEND_MAX_BYTES and SEND_MAX_PER_USER (6) are 413 before any part is sent", async () => {
    const big = await refusal(carol.sends.create({ file: { name: "big.iso", data: new Uint8Array(5 * MIB) } }));
    expect(big).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    const made = [];
    for (let i = 0; i < 6; i++) made.push(await carol.sends.create({ text: `note ${i}` }));
    expect(await refusal(carol.sends.create({ text: "one too many" }))).toMatchObject({ status: 413 });
    await carol.sends.remove(made[0]!.sendId);
    made[0] = await carol.sends.create({ text: "room again" });
    for (const m of made) await carol.sends.remove(m.sendId);
  });

  test("the organization's policies: sends forbidden (old links open nothing), and a cap on their lifetime", async () => {
    const before = await alice.sends.create({ text: "made before the policy" });
    await alice.factors.setPolicies({ requireSecondFactor: false, sendsForbidden: true });
    expect(await refusal(carol.sends.create({ text: "x" }))).toMatchObject({ status: 403, code: "FORBIDDEN" });
    expect(await refusal(open(before.link))).toMatchObject({ status: 404 });
    // A change of another policy by a client that leaves it out keeps it.
    await alice.http.request("PUT", `/orgs/${alice.account.orgId}/policies`, { body: { requireSecondFactor: false } });
    expect((await alice.factors.policies()).sendsForbidden).toBe(true);

    await alice.factors.setPolicies({ requireSecondFactor: false, sendsForbidden: false, sendMaxLifetime: "1d" });
    expect((await open(before.link)).text).toBe("made before the policy");
    expect(await refusal(carol.sends.create({ text: "x" }, { expiresIn: "2d" }))).toMatchObject({ status: 400, field: "expiresIn" });
    const capped = await carol.sends.create({ text: "x" }, { expiresIn: "1d" });
    await alice.factors.setPolicies({ requireSecondFactor: false, sendMaxLifetime: null });
    expect((await alice.factors.policies()).sendMaxLifetime).toBeUndefined();
    await carol.sends.remove(capped.sendId);
    await alice.sends.remove(before.sendId);
  });

  test("the audit log records each send made, opened and deleted, under its sender", async () => {
    const made = await alice.sends.create({ text: "audited" });
    await open(made.link);
    await alice.sends.remove(made.sendId);
    await eventually("the records are written", async () => {
      const types = (await alice.audit.log({ limit: 50 })).events.filter((e) => e.actorId === alice.account.userId).map((e) => e.type);
      return ["send.created", "send.opened", "send.deleted"].every((t) => types.includes(t));
    });
  });
});

describe("a server anyone may register on (REGISTRATION_MODE=open)", () => {
  test("makes no sends unless SENDS=on: it would otherwise host anyone's files under its name", async () => {
    for (const [env, status] of [
      [{}, 403],
      [{ SENDS: "on" }, 201],
    ] as const) {
      const server = await startTestServer({ REGISTRATION_MODE: "open", ...env });
      try {
        const { alice } = await ownerAndAdmin(server.url);
        const made = await alice.sends.create({ text: "x" }).then(
          () => 201,
          (e: ApiError) => e.status,
        );
        expect(made).toBe(status);
      } finally {
        await server.stop();
      }
    }
  });
});

describe("opens per address (SEND_OPEN_RATE_LIMIT)", () => {
  test("past the limit in a minute, an open is 429 and takes no view; the next minute it opens", async () => {
    const server = await startTestServer({ SEND_OPEN_RATE_LIMIT: "3" });
    try {
      const { alice } = await ownerAndAdmin(server.url);
      const made = await alice.sends.create({ text: "counted" }, { maxViews: 5 });
      const open = () => openSend(made.link, { apiUrl: server.url });
      for (let i = 0; i < 3; i++) await open();
      expect(await refusal(open())).toMatchObject({ status: 429, code: "RATE_LIMITED" });
      server.clock.advance(61_000);
      expect(await open()).toMatchObject({ text: "counted", viewsLeft: 1 });
    } finally {
      await server.stop();
    }
  });
});
