/** Recovery requests as a stranger sees them (lib/domain/accounts/recovery-requests.ts), as tables. */
import {
  decideAskOfSecret,
  decideRequesterView,
  decideRequestPolls,
  decideRequestSecret,
  decideRequestSlot,
  decideSessionAsk,
  MAX_OPEN_REQUESTS_PER_ADDRESS,
  MAX_OPEN_REQUESTS_PER_CLIENT,
  NO_ENROLMENT,
  planRecoveryRequest,
  RECOVERY_POLLS_PER_HOUR,
  SHOWN_THRESHOLD,
  type LiveAsk,
  type RecoveryAsk,
  type RecoveryTarget,
  type RequestForm,
} from "../../../../../lib/domain/accounts/recovery-requests";
import type { RecoveryRequest } from "../../../../../lib/domain/accounts/recovery";
import { recoveryPollsTooMany, recoveryTokenWrong, tooFewApprovals } from "../../../../../lib/domain/accounts/refusals";
import type { OrgId, UserId } from "../../../../../lib/domain/ids";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const bob = "0b0b0b0b-0000-4000-8000-000000000001" as UserId;
const acme = "0ac3e000-0000-4000-8000-000000000002" as OrgId;
const form: RequestForm = {
  requestId: "r-new",
  addressKey: "addr",
  clientKey: "client",
  bindingHash: null,
  publicKey: "cGs=",
  tokenHash: "h",
  createdAt: "2030-01-01T00:00:00.000Z",
  expiresAt: "2030-01-08T00:00:00.000Z",
};
const target = (p: Partial<RecoveryTarget> = {}): RecoveryTarget => ({
  userId: bob,
  orgId: acme,
  removed: false,
  kdfSalt: "salt",
  enrolment: { enrolmentId: "e-1", kdfSalt: "salt" },
  ...p,
});
const bobsSubjects = { actorId: bob, orgId: acme, targetUserId: bob };

test.each<[string, RecoveryTarget | null, "real" | "decoy"]>([
  ["an account enrolled under its password", target(), "real"],
  ["no account", null, "decoy"],
  ["an account taken out of its organization", target({ removed: true }), "decoy"],
  ["an account with no enrolment", target({ enrolment: null }), "decoy"],
  ["an enrolment made under an earlier password", target({ enrolment: { enrolmentId: "e-1", kdfSalt: "salt-0" } }), "decoy"],
])("a request for %s", (_what, found, kind) => {
  const plan = planRecoveryRequest(found, form);
  // Everything but the account (and so the audit event's subjects) is the same for any address.
  expect({ ...plan.request, account: undefined }).toEqual({ ...form, account: undefined });
  if (kind === "real") {
    expect(plan).toEqual({ request: { ...form, account: { userId: bob, orgId: acme, enrolmentId: "e-1" } }, subjects: bobsSubjects });
  } else {
    expect(plan).toEqual({ request: { ...form, account: null }, subjects: NO_ENROLMENT });
  }
});

test("a decoy's audit event names the same kinds of subject a real one does, none of them an account's", () => {
  expect(Object.keys(NO_ENROLMENT).sort()).toEqual(Object.keys(bobsSubjects).sort());
  expect(Object.values(NO_ENROLMENT)).not.toContain(bob);
});

const open = (requestId: string, p: Partial<LiveAsk> = {}): LiveAsk => ({
  requestId,
  clientKey: `client-${requestId}`,
  bindingHash: null,
  approved: false,
  ...p,
});
const others = (n: number, p: Partial<LiveAsk> = {}) => Array.from({ length: n }, (_, i) => open(`o${i}`, p));
const fromClient = (n: number) => Array.from({ length: n }, (_, i) => open(`c${i}`, { clientKey: "client" }));
const bound = (b: string | null) => ({ clientKey: "client", bindingHash: b });

test.each<[string, LiveAsk[], { clientKey: string; bindingHash: string | null }, { held: boolean; replaces: string[] }]>([
  ["the first request of an address", [], bound(null), { held: false, replaces: [] }],
  ["one below the address's cap", others(MAX_OPEN_REQUESTS_PER_ADDRESS - 1), bound(null), { held: false, replaces: [] }],
  ["at the address's cap: held, and no one displaced", others(MAX_OPEN_REQUESTS_PER_ADDRESS), bound(null), { held: true, replaces: [] }],
  [
    "at the cap, but approved ones do not count (the owner's, checked by a trustee)",
    others(MAX_OPEN_REQUESTS_PER_ADDRESS, { approved: true }),
    bound(null),
    { held: false, replaces: [] },
  ],
  ["one below the client's cap", fromClient(MAX_OPEN_REQUESTS_PER_CLIENT - 1), bound(null), { held: false, replaces: [] }],
  ["at the client's cap: held", fromClient(MAX_OPEN_REQUESTS_PER_CLIENT), bound(null), { held: true, replaces: [] }],
  [
    "another device's bound request, with another secret: never replaced",
    [open("mine", { bindingHash: "owner" })],
    bound("stranger"),
    { held: false, replaces: [] },
  ],
  [
    "the same device starting over (its secret): replaces its own",
    [open("mine", { bindingHash: "owner", clientKey: "client" })],
    bound("owner"),
    { held: false, replaces: ["mine"] },
  ],
  [
    "the same device at its client's cap: its own request does not count against it",
    [open("mine", { bindingHash: "owner", clientKey: "client" }), ...fromClient(MAX_OPEN_REQUESTS_PER_CLIENT - 1)],
    bound("owner"),
    { held: false, replaces: ["mine"] },
  ],
  [
    "held: it replaces nothing, not even its own",
    [open("mine", { bindingHash: "owner" }), ...others(MAX_OPEN_REQUESTS_PER_ADDRESS)],
    bound("owner"),
    { held: true, replaces: [] },
  ],
  ["a request without a secret matches no unbound one", [open("a", { clientKey: "client" })], bound(null), { held: false, replaces: [] }],
])("a request's slot: %s", (_what, live, ask, expected) => {
  expect(decideRequestSlot(live, ask)).toEqual(expected);
});

test.each<[string, { r: string } | null, ReturnType<typeof outcomeOf>]>([
  ["sealed for this request", { r: "r-1" }, "ok"],
  ["sealed for another", { r: "r-2" }, asRefusal(recoveryTokenWrong())],
  ["not this server's, or expired", null, asRefusal(recoveryTokenWrong())],
])("a request's secret: %s", (_what, opened, expected) => {
  expect(outcomeOf(() => decideRequestSecret(opened, "r-1"))).toEqual(expected);
});

const real: RecoveryRequest = {
  requestId: "r-1",
  userId: bob,
  orgId: acme,
  enrolmentId: "e-1",
  publicKey: "cGs=",
  tokenHash: "h",
  status: "pending",
  createdAt: form.createdAt,
  expiresAt: form.expiresAt,
};
const ask = (p: Partial<RecoveryAsk> = {}): RecoveryAsk => ({
  requestId: "r-1",
  tokenHash: "h",
  status: "pending",
  createdAt: form.createdAt,
  expiresAt: form.expiresAt,
  request: real,
  ...p,
});

test.each<[string, RecoveryAsk | null, string, ReturnType<typeof outcomeOf>]>([
  ["a real one stored with this secret's hash", ask(), "h", "ok"],
  ["a decoy stored with this secret's hash", ask({ request: null }), "h", "ok"],
  ["stored with another's", ask(), "other", asRefusal(recoveryTokenWrong())],
  ["gone (a decoy's secret from before decoys were stored)", null, "h", asRefusal(recoveryTokenWrong())],
])("the request a secret names: %s", (_what, found, tokenHash, expected) => {
  expect(outcomeOf(() => decideAskOfSecret(found, tokenHash))).toEqual(expected);
});

test.each<[string, number, ReturnType<typeof outcomeOf>]>([
  ["within its budget", RECOVERY_POLLS_PER_HOUR, "ok"],
  ["past it", RECOVERY_POLLS_PER_HOUR + 1, asRefusal(recoveryPollsTooMany(60))],
])("a request's polls: %s", (_what, count, expected) => {
  expect(outcomeOf(() => decideRequestPolls(count, 60_000))).toEqual(expected);
});

test.each<[string, RecoveryAsk, number, RecoveryRequest | null]>([
  ["a decoy", ask({ request: null }), 0, null],
  ["a real one no trustee approved", ask(), 0, null],
  [
    "a real one held, replaced or cancelled by its owner, unapproved",
    ask({ status: "cancelled", request: { ...real, status: "cancelled" } }),
    0,
    null,
  ],
  ["a real one a trustee approved", ask(), 1, real],
  [
    "a real one approved, then cancelled by its owner",
    ask({ request: { ...real, status: "cancelled" } }),
    2,
    { ...real, status: "cancelled" },
  ],
])("what polling shows of %s", (_what, found, approvals, expected) => {
  expect(decideRequesterView(found, approvals)).toEqual(expected);
});

test.each<[string, RecoveryAsk, number, ReturnType<typeof outcomeOf>]>([
  ["a decoy", ask({ request: null }), 0, asRefusal(tooFewApprovals(0, SHOWN_THRESHOLD))],
  ["a real one no trustee approved (whatever its k)", ask(), 0, asRefusal(tooFewApprovals(0, SHOWN_THRESHOLD))],
  ["a real one ended, unapproved", ask({ request: { ...real, status: "cancelled" } }), 0, asRefusal(tooFewApprovals(0, SHOWN_THRESHOLD))],
  ["a real one approved: on to its account's rules", ask(), 1, "ok"],
])("signing in with %s", (_what, found, approvals, expected) => {
  expect(outcomeOf(() => decideSessionAsk(found, approvals))).toEqual(expected);
});
