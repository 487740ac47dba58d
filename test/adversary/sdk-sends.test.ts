/**
 * Sends against a dishonest server: real SDK clients, the real service behind a proxy that rewrites
 * its answers (test/helpers/dishonest-proxy.ts). The server holds every sealed part and can answer
 * anything for an open, but it never holds a link's secret: another send's header, a part moved,
 * changed or of another send, a file cut short, a password check skipped, all are refused by name
 * (`SEND_TAMPERED`) with nothing shown; and the sender's list never shows one send's link as another's.
 */
import { randomBytes } from "node:crypto";
import { openSend, SecurityError, type VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin } from "../helpers/sdk";
import { dishonestSuite, type Edit } from "../helpers/dishonest-proxy";
import { sealOwnerNote } from "../../sdk/sends/owner-note";
import { generateEd25519KeyPair } from "../../protocol/crypto/primitives";
import { fromBase64 } from "../../protocol/encoding";

jest.setTimeout(240_000);

const MIB = 1024 * 1024;

async function refusedAsTampered(attempt: Promise<unknown>): Promise<void> {
  const err = await attempt.then(
    (shown) => new Error(`it was shown: ${JSON.stringify(shown).slice(0, 80)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SecurityError);
  expect((err as SecurityError).code).toBe("SEND_TAMPERED");
}

describe.each(SQL_ENGINES)("sends against a dishonest server, on %s", (_engine, openStore) => {
  const suite = dishonestSuite(openStore, { SENDS: "on" });
  let alice: VaultClient;
  const open = (link: string, password?: string) => openSend(link, { apiUrl: suite.proxy.url, ...(password && { password }) });

  beforeAll(async () => {
    ({ alice } = await ownerAndAdmin(suite.proxy.url));
  });

  /** The open's answer for `sendId`, changed. */
  const onOpen =
    (sendId: string, change: (body: any) => any): Edit =>
    (method, path, body, status) =>
      method === "POST" && path === `/sends/${sendId}/open` && status === 200 ? change(body) : body;
  /** Part `index`'s answer for `sendId`, changed. */
  const onPart =
    (sendId: string, index: number, change: (body: any) => any): Edit =>
    (method, path, body, status) =>
      method === "POST" && path === `/sends/${sendId}/parts/${index}/read` && status === 200 ? change(body) : body;

  /** The open's answer of a send, as the server gives it (a view taken). */
  async function answerOf(sendId: string, link: string): Promise<any> {
    let seen: any;
    suite.proxy.edit = onOpen(sendId, (body) => (seen = body));
    await open(link);
    suite.proxy.edit = (_m, _p, body) => body;
    return seen;
  }

  const fileSend = async (size = 2 * MIB + 77) => {
    const data = new Uint8Array(randomBytes(size));
    return { data, made: await alice.sends.create({ file: { name: "dump.sql", data } }) };
  };

  test("another send's header in its place: SEND_TAMPERED, nothing shown", async () => {
    const a = await alice.sends.create({ text: "the real secret" });
    const b = await alice.sends.create({ text: "the server's choice" });
    const other = await answerOf(b.sendId, b.link);
    suite.proxy.edit = onOpen(a.sendId, (body) => ({ ...body, header: other.header }));
    await refusedAsTampered(open(a.link));
  });

  test("a header with one bit changed, or a count of parts the sender did not seal: SEND_TAMPERED", async () => {
    const a = await alice.sends.create({ text: "bit by bit" });
    suite.proxy.edit = onOpen(a.sendId, (body) => {
      const bytes = Buffer.from(body.header, "base64");
      bytes[bytes.length - 20]! ^= 1;
      return { ...body, header: bytes.toString("base64") };
    });
    await refusedAsTampered(open(a.link));
    // A text is one part, sealed as the last: told there are two, its header no longer opens as the first of two.
    const b = await alice.sends.create({ text: "one part" });
    suite.proxy.edit = onOpen(b.sendId, (body) => ({ ...body, parts: 2 }));
    await refusedAsTampered(open(b.link));
  });

  test("a file cut short (fewer parts than its header says), a part moved, or another file's part: SEND_TAMPERED", async () => {
    const { made } = await fileSend();
    suite.proxy.edit = onOpen(made.sendId, (body) => ({ ...body, parts: body.parts - 1 }));
    await refusedAsTampered(open(made.link));

    const second = await fileSend();
    let partOne: any;
    suite.proxy.edit = (_method, path, body, status) => {
      if (path === `/sends/${second.made.sendId}/parts/1/read` && status === 200) partOne = body;
      return path === `/sends/${second.made.sendId}/parts/2/read` && status === 200 ? { ...partOne, index: 2 } : body;
    };
    await refusedAsTampered(open(second.made.link));

    const third = await fileSend();
    const fourth = await fileSend();
    let foreign: any;
    suite.proxy.edit = onPart(fourth.made.sendId, 1, (body) => (foreign = body));
    await open(fourth.made.link);
    suite.proxy.edit = onPart(third.made.sendId, 1, () => foreign);
    await refusedAsTampered(open(third.made.link));
  });

  test("a server that skips its password check still shows nothing: the password is part of the key", async () => {
    const made = await alice.sends.create({ text: "behind a password" }, { password: "granite falls" });
    suite.proxy.sent.length = 0;
    await open(made.link, "granite falls");
    const proof = suite.proxy.sent.find((r) => r.path === `/sends/${made.sendId}/open`)!.body.passwordProof;
    // The server lets anyone in, as if the proof had been given (here: the one it saw before).
    suite.proxy.rewrite = (method, path, body) =>
      method === "POST" && path === `/sends/${made.sendId}/open` ? { ...body, passwordProof: proof } : body;
    await refusedAsTampered(open(made.link));
  });

  test("the sender's list: notes swapped between two sends show neither link, never one send's link as the other's", async () => {
    const a = await alice.sends.create({ text: "a" }, { title: "First" });
    const b = await alice.sends.create({ text: "b" }, { title: "Second" });
    suite.proxy.edit = (method, path, body) => {
      if (method !== "GET" || path !== "/sends") return body;
      const na = body.sends.find((s: any) => s.sendId === a.sendId).ownerNote;
      const nb = body.sends.find((s: any) => s.sendId === b.sendId).ownerNote;
      return {
        sends: body.sends.map((s: any) =>
          s.sendId === a.sendId ? { ...s, ownerNote: nb } : s.sendId === b.sendId ? { ...s, ownerNote: na } : s,
        ),
      };
    };
    const listed = await alice.sends.list();
    for (const id of [a.sendId, b.sendId]) expect(listed.find((s) => s.sendId === id)).toMatchObject({ title: null, link: null });
  });

  test("the sender's list: a note the server made up, sealed to the sender's public key with a secret of its own, shows no link", async () => {
    const made = await alice.sends.create({ text: "the real one" }, { title: "Real" });
    const impostor = await generateEd25519KeyPair();
    const forged = await sealOwnerNote(
      {
        publicKeyDer: fromBase64(alice.account.publicKey),
        rsaPrivateKey: undefined as never,
        signingPrivateKey: impostor.privateKey,
        signingPublicKeyRaw: impostor.publicKeyRaw,
      },
      made.sendId,
      { title: "Real", kind: "text", secret: Buffer.from(randomBytes(32)).toString("base64url") },
    );
    suite.proxy.edit = (method, path, body) =>
      method === "GET" && path === "/sends"
        ? { sends: body.sends.map((s: any) => (s.sendId === made.sendId ? { ...s, ownerNote: forged } : s)) }
        : body;
    expect((await alice.sends.list()).find((s) => s.sendId === made.sendId)).toMatchObject({ title: null, link: null });
  });
});
