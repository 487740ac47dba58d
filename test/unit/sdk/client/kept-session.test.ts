/**
 * The web vault's kept login (sdk/client/kept-session.ts): its tokens open only with the key the
 * account's password gives, under the context they were sealed with, for the account they name;
 * nothing of the tokens shows in what is kept.
 */
import { isKeptSession, openKept, sealKept, WEB_SESSION_SEAL_CONTEXT, type Account } from "../../../../sdk";
import { sealKeyFor } from "../../../../sdk/client/kept-session";
import { SecurityError } from "../../../../sdk/errors";

const account = { userId: "7db44032-9b1b-4b98-b189-bfb7c4b33fb3", email: "ada@example.test" } as Account;
const tokens = { accessToken: "eyJhbGciOi.access.token", refreshToken: "refresh-token-of-ada-0123456789abcdef" };
const stretched = (byte: number) => new Uint8Array(32).fill(byte);

test("sealed under the password's key: the tokens are not in what is kept, and open again with the same key", async () => {
  const key = await sealKeyFor(stretched(1), WEB_SESSION_SEAL_CONTEXT);
  const kept = await sealKept(key, WEB_SESSION_SEAL_CONTEXT, account, tokens);
  expect(isKeptSession(JSON.parse(JSON.stringify(kept)))).toBe(true);
  expect(JSON.stringify(kept)).not.toContain(tokens.refreshToken);
  expect(JSON.stringify(kept)).not.toContain(tokens.accessToken);
  await expect(openKept(key, kept)).resolves.toEqual(tokens);
});

test.each<[string, (kept: Awaited<ReturnType<typeof sealKept>>) => Promise<unknown>]>([
  ["another password's key", async (kept) => openKept(await sealKeyFor(stretched(2), WEB_SESSION_SEAL_CONTEXT), kept)],
  ["the same key under another context", async (kept) => openKept(await sealKeyFor(stretched(1), "another-client-v1"), kept)],
  [
    "another account named in what is kept",
    async (kept) => openKept(await sealKeyFor(stretched(1), WEB_SESSION_SEAL_CONTEXT), { ...kept, account: { ...account, userId: "x" } }),
  ],
  [
    "a bit of the sealed tokens changed",
    async (kept) => {
      const bytes = Buffer.from(kept.sealedTokens, "base64");
      bytes[20]! ^= 1;
      return openKept(await sealKeyFor(stretched(1), WEB_SESSION_SEAL_CONTEXT), { ...kept, sealedTokens: bytes.toString("base64") });
    },
  ],
])("refused: %s", async (_, open) => {
  const kept = await sealKept(await sealKeyFor(stretched(1), WEB_SESSION_SEAL_CONTEXT), WEB_SESSION_SEAL_CONTEXT, account, tokens);
  await expect(open(kept)).rejects.toBeInstanceOf(SecurityError);
});
