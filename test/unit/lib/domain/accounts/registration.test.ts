/** Who may register (lib/domain/accounts/registration.ts), a table: the request in, the invite redeemed or the named refusal out. */
import {
  decideRegistration,
  decideRegistrationOpen,
  planRegistration,
  planRegistrationOffer,
  type RegistrationForm,
  type RegistrationRequest,
} from "../../../../../lib/domain/accounts/registration";
import type { Invite } from "../../../../../lib/domain/orgs/invites";
import { userIdForKey } from "../../../../../lib/domain/ids";
import { DEFAULT_POLICIES, type OrgPolicies } from "../../../../../lib/domain/orgs/policies";
import {
  badBindingTag,
  badStatementSignature,
  bindingWithoutInvite,
  registrationDisabled,
} from "../../../../../lib/domain/accounts/refusals";
import { kdfBelowPolicy, notTheInvitedEmail } from "../../../../../lib/domain/orgs/refusals";
import type { AppError } from "../../../../../lib/errors";
import { newUserKeys, registrationBundle, type UserKeys } from "../../../../helpers/crypto";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { kdfStatementOf, keyStatementOf } from "../../../../helpers/statements";

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
  expect(outcomeOf(() => decideRegistrationOpen("disabled"))).toEqual(asRefusal(registrationDisabled()));
  expect(outcomeOf(() => decideRegistration(request({ mode: "disabled", tokenGiven: true, invite: invite() })))).toEqual(
    asRefusal(registrationDisabled()),
  );
  expect(() => decideRegistrationOpen("invite")).not.toThrow();
});

describe("planRegistration: the whole registration, one plan", () => {
  let keys: UserKeys;
  let other: UserKeys;
  beforeAll(async () => {
    [keys, other] = await Promise.all([newUserKeys(), newUserKeys()]);
  });
  const found = (over: Partial<RegistrationRequest> & { policies?: OrgPolicies | null } = {}) => ({
    ...request(over),
    policies: null,
    ...over,
  });
  const form = (over: Partial<RegistrationForm> = {}): RegistrationForm => ({
    ...registrationBundle(keys),
    address: "bob@example.test",
    ...over,
  });
  const signer = (k: UserKeys) => {
    const bundle = registrationBundle(k);
    return { userId: userIdForKey(bundle.signingPublicKey), email: "bob@example.test", keys: k, bundle };
  };

  test("an open server: a new organization under the given name, the user id of the signing key, the KDF as stored", () => {
    const plan = planRegistration(
      found(),
      form({ orgName: "Acme", keyStatement: keyStatementOf(signer(keys)), kdfStatement: kdfStatementOf(signer(keys)) }),
    );
    expect(plan).toEqual({ invite: null, orgName: "Acme", userId: userIdForKey(registrationBundle(keys).signingPublicKey), kdf: keys.kdf });
  });

  test("an invitee's binding is kept with the invite it binds", () => {
    const mac = Buffer.alloc(32, 7).toString("base64");
    const plan = planRegistration(found({ tokenGiven: true, invite: invite() }), form({ inviteBinding: mac }));
    expect(plan.invite?.inviteId).toBe("i");
    expect(plan.inviteBinding).toEqual({ inviteId: "i", mac });
  });

  const policy = (iterations: number): OrgPolicies => ({
    ...DEFAULT_POLICIES,
    minKdf: { argon2idMemoryKiB: 65_536, argon2idIterations: 3, pbkdf2Iterations: iterations },
  });

  test.each<[string, () => ReturnType<typeof found>, () => RegistrationForm, AppError]>([
    [
      "an invite for another address",
      () => found({ tokenGiven: true, invite: invite({ email: "eve@example.test" }) }),
      () => form(),
      notTheInvitedEmail(),
    ],
    [
      "a key statement signed by another key",
      () => found(),
      () => form({ keyStatement: keyStatementOf(signer(other)) }),
      badStatementSignature("The key statement", "keyStatement"),
    ],
    [
      "a binding without an invite",
      () => found(),
      () => form({ inviteBinding: Buffer.alloc(32).toString("base64") }),
      bindingWithoutInvite(),
    ],
    [
      "a binding that is no HMAC tag",
      () => found({ tokenGiven: true, invite: invite() }),
      () => form({ inviteBinding: "AAAA" }),
      badBindingTag(),
    ],
    [
      "an invitee's KDF below their organization's policy",
      () => found({ tokenGiven: true, invite: invite(), policies: policy(700_000) }),
      () => form(),
      kdfBelowPolicy(policy(700_000).minKdf!),
    ],
  ])("%s", (_, locked, sent, refusal) => {
    expect(outcomeOf(() => planRegistration(locked(), sent()))).toEqual(asRefusal(refusal));
  });

  test("the organization's policy binds invitees only: the founder of a new organization registers at the floor", () => {
    expect(planRegistration(found({ tokenGiven: true, invite: invite(), policies: policy(600_000) }), form()).invite?.inviteId).toBe("i");
    expect(planRegistration(found({ policies: policy(700_000) }), form()).invite).toBeNull();
  });
});

describe("planRegistrationOffer: what a first page is told", () => {
  test.each([
    ["an empty invite-only server", "invite", false, { mode: "invite", firstAccount: true }],
    ["an invite-only server with users", "invite", true, { mode: "invite", firstAccount: false }],
    ["an empty open server", "open", false, { mode: "open", firstAccount: true }],
    ["an open server with users", "open", true, { mode: "open", firstAccount: false }],
    ["a disabled server, even empty: nobody can make the first account", "disabled", false, { mode: "disabled", firstAccount: false }],
  ] as const)("%s", (_, mode, hasUsers, offer) => {
    expect(planRegistrationOffer(mode, hasUsers)).toEqual(offer);
  });
});
