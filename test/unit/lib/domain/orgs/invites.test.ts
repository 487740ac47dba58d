/**
 * Invites (lib/domain/orgs/invites.ts): an invite's lifetime (decideInviteLifetime: `expiresIn` in, milliseconds or the named
 * refusal out), which invites are redeemable (isRedeemable), and an invite a token names (decideRedeemable).
 */
import { decideInviteLifetime, decideRedeemable, isRedeemable, type Invite } from "../../../../../lib/domain/orgs/invites";
import { badInviteLifetime } from "../../../../../lib/domain/orgs/refusals";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const DEFAULT = 72 * 3_600_000;

test.each<[string | undefined, number | ReturnType<typeof asRefusal>]>([
  [undefined, DEFAULT],
  ["24h", 24 * 3_600_000],
  ["1s", 1000],
  ["30d", 30 * 86_400_000],
  ["31d", asRefusal(badInviteLifetime())],
  ["soon", asRefusal(badInviteLifetime())],
  ["0s", asRefusal(badInviteLifetime())],
])("expiresIn %s: %s", (expiresIn, expected) => {
  let got: number | ReturnType<typeof asRefusal> = 0;
  const outcome = outcomeOf(() => {
    got = decideInviteLifetime(expiresIn, DEFAULT);
  });
  expect(outcome === "ok" ? got : outcome).toEqual(expected);
});

describe("an invite a token names (decideRedeemable)", () => {
  const now = "2026-11-24T12:00:00.000Z";
  const invite = (status: "pending" | "used" | "revoked", expiresAt = "2026-11-25T00:00:00.000Z") =>
    ({ inviteId: "i", orgId: "o", email: "a@example.test", role: "member", inviterId: "u", status, expiresAt, createdAt: now }) as Invite;
  test.each<[string, Invite | null, string]>([
    ["none", null, "NOT_FOUND"],
    ["pending", invite("pending"), "redeemable"],
    ["used", invite("used"), "INVITE_NOT_REDEEMABLE"],
    ["revoked", invite("revoked"), "INVITE_NOT_REDEEMABLE"],
    ["expired", invite("pending", now), "INVITE_NOT_REDEEMABLE"],
  ])("%s: %s", (_what, given, expected) => {
    let got = "redeemable";
    try {
      decideRedeemable(given, now);
    } catch (err) {
      got = (err as { type: string }).type;
    }
    expect(got).toBe(expected);
  });
});

describe("a redeemable invite (isRedeemable)", () => {
  test("only a pending, unexpired invite is redeemable", () => {
    const now = new Date().toISOString();
    const later = new Date(Date.now() + 1000).toISOString();
    expect(isRedeemable({ status: "pending", expiresAt: later }, now)).toBe(true);
    expect(isRedeemable({ status: "pending", expiresAt: now }, now)).toBe(false);
    expect(isRedeemable({ status: "used", expiresAt: later }, now)).toBe(false);
    expect(isRedeemable({ status: "revoked", expiresAt: later }, now)).toBe(false);
  });
});
