/** An invite's lifetime (decideInviteLifetime, lib/domain/invites.ts): `expiresIn` in, milliseconds or the named refusal out. */
import { decideInviteLifetime } from "../../../lib/domain/invites";

const DEFAULT = 72 * 3_600_000;

test.each<[string | undefined, number | string]>([
  [undefined, DEFAULT],
  ["24h", 24 * 3_600_000],
  ["1s", 1000],
  ["30d", 30 * 86_400_000],
  ["31d", "INVALID expiresIn"],
  ["soon", "INVALID expiresIn"],
  ["0s", "INVALID expiresIn"],
])("expiresIn %s: %s", (expiresIn, expected) => {
  let got: number | string;
  try {
    got = decideInviteLifetime(expiresIn, DEFAULT);
  } catch (err) {
    got = `${(err as { type: string }).type} ${(err as { data: { field: string } }).data.field}`;
  }
  expect(got).toBe(expected);
});
