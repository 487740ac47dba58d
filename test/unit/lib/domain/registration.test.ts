/** Who may register (lib/domain/registration.ts), a table: the request in, the invite redeemed or the named refusal out. */
import { decideRegistration, decideRegistrationOpen, type RegistrationRequest } from "../../../../lib/domain/registration";
import type { Invite } from "../../../../lib/domain/invites";

const now = "2026-11-24T12:00:00.000Z";
const invite = (over: Partial<Invite> = {}): Invite =>
  ({
    inviteId: "i",
    orgId: "o",
    email: "bob@example.test",
    role: "member",
    inviterId: "u",
    status: "pending",
    expiresAt: "2026-11-25T12:00:00.000Z",
    createdAt: now,
    ...over,
  }) as Invite;
const request = (over: Partial<RegistrationRequest>): RegistrationRequest => ({
  mode: "open",
  tokenGiven: false,
  invite: null,
  hasUsers: true,
  address: "bob@example.test",
  now,
  ...over,
});

function outcome(r: RegistrationRequest): string {
  try {
    return decideRegistration(r) ? "redeems the invite" : "no invite needed";
  } catch (err) {
    const e = err as { type?: string; data?: { field?: string } };
    return `${e.type}${e.data?.field ? ` ${e.data.field}` : ""}`;
  }
}

test.each<[string, Partial<RegistrationRequest>, string]>([
  ["an open server, no invite", {}, "no invite needed"],
  ["a disabled server", { mode: "disabled" }, "FORBIDDEN"],
  ["an invite-only server's first user", { mode: "invite", hasUsers: false }, "no invite needed"],
  ["an invite-only server with users, no invite", { mode: "invite" }, "FORBIDDEN"],
  ["a token that is no invite's", { mode: "invite", tokenGiven: true }, "NOT_FOUND"],
  ["a redeemable invite for the address", { mode: "invite", tokenGiven: true, invite: invite() }, "redeems the invite"],
  ["an invite already used", { tokenGiven: true, invite: invite({ status: "used" }) }, "INVITE_NOT_REDEEMABLE"],
  ["an expired invite", { tokenGiven: true, invite: invite({ expiresAt: now }) }, "INVITE_NOT_REDEEMABLE"],
  ["an invite for another address", { tokenGiven: true, invite: invite({ email: "eve@example.test" }) }, "INVALID email"],
])("%s: %s", (_what, over, expected) => {
  expect(outcome(request(over))).toBe(expected);
});

test("a disabled server refuses before anything is counted or looked up", () => {
  expect(() => decideRegistrationOpen("disabled")).toThrow("Registration is disabled");
  expect(() => decideRegistrationOpen("invite")).not.toThrow();
});
