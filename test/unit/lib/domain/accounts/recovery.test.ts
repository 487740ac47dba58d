/** Account recovery's rules (lib/domain/accounts/recovery.ts), as tables. */
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import {
  decideEnrolmentCurrent,
  decideRecoveryApproval,
  decideRecoveryCancel,
  decideRecoveryCancelled,
  decideRecoveryCompletion,
  decideRecoveryEnrolment,
  decideRecoveryOpened,
  decideRecoveryState,
  decideUnenrolment,
  planRecoveryApproval,
  planRecoveryEnrolment,
  planRecoverySession,
  recoveryStatusAt,
  type EnrolmentForm,
  type RecoveringAccount,
  type RecoveryRequest,
  type StoredEnrolment,
  type TrusteeKeys,
  type TrusteeState,
} from "../../../../../lib/domain/accounts/recovery";
import { requireUser } from "../../../../../lib/domain/accounts/users";
import type { OrgId, UserId } from "../../../../../lib/domain/ids";
import { MAX_RECOVERY_TRUSTEES } from "../../../../../lib/domain/orgs/policies";
import {
  approvalNotSigned,
  badDeviceName,
  badRecoveryThreshold,
  enrolmentNotNewer,
  enrolmentNotSigned,
  enrolmentStateWrong,
  noRecoveryEnrolment,
  notATrustee,
  recoveryNotPending,
  recoveryRequestNotFound,
  recoveryTokenWrong,
  tokenUserGone,
  tooFewApprovals,
  trusteeNamedTwice,
  trusteeNotEligible,
  trusteeOutsideOrg,
} from "../../../../../lib/domain/accounts/refusals";
import { removedFromOrg } from "../../../../../lib/domain/orgs/refusals";
import type { AppError } from "../../../../../lib/errors";
import { keyFingerprint, sha256Hex } from "../../../../../lib/domain/vaults/roster";
import { approvalBytes, enrolmentBytes, sessionProofBytes } from "../../../../../protocol/formats/recovery";
import { asRefusal, code, outcomeOf } from "../../../../helpers/refusal";

const org = "o-1" as OrgId;
const user = "u-bob" as UserId;
const t = (id: string, p: Partial<TrusteeState> = {}): TrusteeState => ({ userId: id as UserId, orgId: org, role: "admin", ...p });
const people = new Map<UserId, TrusteeState>(
  [
    t("a"),
    t("b"),
    t("c", { role: "owner" }),
    t("m", { role: "member" }),
    t("x", { orgId: "o-2" as OrgId }),
    t("gone", { removedAt: "2026-01-01T00:00:00.000Z" }),
    t("u-bob"),
  ].map((s) => [s.userId, s]),
);
const enrol = (ids: string[], threshold: number, policyMinThreshold = 2) =>
  outcomeOf(() =>
    decideRecoveryEnrolment({ userId: user, orgId: org, threshold, trusteeIds: ids as UserId[], trustees: people, policyMinThreshold }),
  );

const threshold = (minK: number) => badRecoveryThreshold(minK, MAX_RECOVERY_TRUSTEES);

test.each<[string, string[], number, number, "ok" | AppError]>([
  ["2 of 3 admins and owners", ["a", "b", "c"], 2, 2, "ok"],
  ["3 of 3", ["a", "b", "c"], 3, 2, "ok"],
  ["1 of 3", ["a", "b", "c"], 1, 2, threshold(2)],
  ["4 of 3", ["a", "b", "c"], 4, 2, threshold(2)],
  ["one trustee", ["a"], 1, 2, threshold(2)],
  ["2 of 3 where the organization asks 3", ["a", "b", "c"], 2, 3, threshold(3)],
  ["a trustee twice", ["a", "a", "b"], 2, 2, trusteeNamedTwice()],
  ["a member", ["a", "m"], 2, 2, trusteeNotEligible("m")],
  ["someone of another organization", ["a", "x"], 2, 2, trusteeOutsideOrg("x")],
  ["someone removed", ["a", "gone"], 2, 2, trusteeOutsideOrg("gone")],
  ["nobody known", ["a", "nobody"], 2, 2, trusteeOutsideOrg("nobody")],
  ["the user themself", ["a", "u-bob"], 2, 2, trusteeOutsideOrg("u-bob")],
])("enrolment: %s", (_what, ids, k, min, expected) => {
  expect(enrol(ids, k, min)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

const now = "2026-11-24T12:00:00.000Z";
const pending = { status: "pending" as const, expiresAt: "2026-12-01T00:00:00.000Z", enrolmentId: "e-1", tokenHash: "h" };

test.each<[string, Partial<typeof pending>, string | undefined, string[], string]>([
  ["a trustee of the request's enrolment", {}, "e-1", ["a", "b"], "ok"],
  ["not a trustee", {}, "e-1", ["b", "c"], "FORBIDDEN"],
  ["a trustee of a newer enrolment", {}, "e-2", ["a", "b"], "FORBIDDEN"],
  ["a completed request", { status: "completed" as never }, "e-1", ["a"], "CONFLICT"],
  ["an expired request", { expiresAt: "2026-11-24T11:00:00.000Z" }, "e-1", ["a"], "CONFLICT"],
])("approval: %s", (_what, r, enrolmentId, trusteeIds, expected) => {
  expect(
    code(() =>
      decideRecoveryApproval({
        request: { ...pending, ...r },
        enrolmentId,
        trusteeIds: trusteeIds as UserId[],
        trusteeId: "a" as UserId,
        now,
      }),
    ),
  ).toBe(expected);
});

test.each<[string, string, { enrolmentId: string; threshold: number } | null, number, string]>([
  ["k approvals", "h", { enrolmentId: "e-1", threshold: 2 }, 2, "ok"],
  ["too few", "h", { enrolmentId: "e-1", threshold: 2 }, 1, "CONFLICT"],
  ["another request's secret", "other", { enrolmentId: "e-1", threshold: 2 }, 2, "NOT_FOUND"],
  ["an enrolment replaced since", "h", { enrolmentId: "e-2", threshold: 2 }, 2, "CONFLICT"],
  ["no enrolment", "h", null, 2, "CONFLICT"],
])("completion: %s", (_what, tokenHash, enrolment, approvals, expected) => {
  expect(code(() => decideRecoveryCompletion({ request: pending, tokenHash, enrolment, approvals, now }))).toBe(expected);
});

// ---- The actions as plans ----------------------------------------------------------------------

const edKeys = () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ type: "spki", format: "der" }).subarray(-32);
  return { signingPublicKey: raw.toString("base64"), privateKey };
};
const signed = (bytes: Uint8Array, key: KeyObject) => sign(null, Buffer.from(bytes), key).toString("base64");
const hashOf = (b64: string) => sha256Hex(Buffer.from(b64, "base64"));
const bobKeys = edKeys();
const annKeys = edKeys();
const bob: RecoveringAccount & { publicKey: string; kdfStatement?: { version: number } } = {
  userId: user,
  orgId: org,
  publicKey: "rsa-bob",
  signingPublicKey: bobKeys.signingPublicKey,
  kdf: { salt: "salt-1" },
  kdfStatement: { version: 2 },
};
const bobFingerprint = keyFingerprint(bob);
const ann = { userId: "a" as UserId, orgId: org, signingPublicKey: annKeys.signingPublicKey };

test("a missing user is the token's user gone", () => {
  expect(outcomeOf(() => requireUser(null))).toEqual(asRefusal(tokenUserGone()));
  expect(outcomeOf(() => requireUser(undefined))).toEqual(asRefusal(tokenUserGone()));
  expect(requireUser(bob)).toBe(bob);
});

const shares = ["a", "b", "c"].map((id) => ({
  trusteeId: id as UserId,
  encryptedShare: Buffer.from(`share-${id}`).toString("base64"),
  trusteeKeys: "f",
}));
const enrolmentForm = (over: Partial<EnrolmentForm> = {}, key = bobKeys.privateKey): EnrolmentForm => {
  const form = { enrolmentId: "e-1", threshold: 2, copy: Buffer.from("copy").toString("base64"), signature: "", shares, ...over };
  const bytes = enrolmentBytes({
    enrolmentId: form.enrolmentId,
    userId: user,
    threshold: form.threshold,
    copy: hashOf(form.copy),
    trustees: form.shares.map((s) => ({ trusteeId: s.trusteeId, keys: s.trusteeKeys, share: hashOf(s.encryptedShare) })),
    ...(form.version !== undefined && { version: form.version, keys: form.keys!, kdfVersion: form.kdfVersion! }),
  });
  return { ...form, signature: over.signature ?? signed(bytes, key) };
};
const planEnrolment = (form: EnrolmentForm, previous: { version?: number } | null = null) =>
  planRecoveryEnrolment({ user: bob, trustees: people, policyMinThreshold: 2, previous, now: "2026-11-24T12:00:00.000Z" }, form);
const versioned = (over: Partial<EnrolmentForm> = {}) => enrolmentForm({ version: 3, keys: bobFingerprint, kdfVersion: 2, ...over });

test.each<[string, EnrolmentForm, ReturnType<typeof outcomeOf>]>([
  ["signed by the user", enrolmentForm(), "ok"],
  ["signed by someone else", enrolmentForm({}, annKeys.privateKey), asRefusal(enrolmentNotSigned())],
  ["signed over another copy", { ...enrolmentForm(), copy: Buffer.from("other").toString("base64") }, asRefusal(enrolmentNotSigned())],
  ["not signed at all", enrolmentForm({ signature: "" }), asRefusal(enrolmentNotSigned())],
  // The trustees and k come first: a bad threshold with a bad signature answers the threshold.
  ["unsigned, and 1 of 3", enrolmentForm({ threshold: 1, signature: "" }), asRefusal(badRecoveryThreshold(2, MAX_RECOVERY_TRUSTEES))],
])("planned enrolment: %s", (_what, form, expected) => {
  expect(outcomeOf(() => planEnrolment(form))).toEqual(expected);
});

test.each<[string, EnrolmentForm, { version?: number } | null, ReturnType<typeof outcomeOf>]>([
  ["versioned, the first", versioned(), null, "ok"],
  ["versioned, after an unversioned one", versioned(), {}, "ok"],
  ["versioned, one past the current", versioned(), { version: 2 }, "ok"],
  ["versioned, at the current version", versioned(), { version: 3 }, asRefusal(enrolmentNotNewer(3))],
  ["versioned, below the current version", versioned({ version: 1 }), { version: 3 }, asRefusal(enrolmentNotNewer(3))],
  ["a version without the account state", { ...versioned(), keys: undefined }, null, asRefusal(enrolmentStateWrong("version"))],
  ["made under other keys", versioned({ keys: "ab".repeat(32) }), null, asRefusal(enrolmentStateWrong("keys"))],
  ["made under an older KDF statement", versioned({ kdfVersion: 1 }), null, asRefusal(enrolmentStateWrong("kdfVersion"))],
  // The version is signed: one the user did not sign (or the unversioned signature of the same enrolment) is refused.
  ["its version changed after signing", { ...versioned(), version: 4 }, null, asRefusal(enrolmentNotSigned())],
  [
    "the unversioned signature with a version",
    { ...versioned(), signature: enrolmentForm().signature },
    null,
    asRefusal(enrolmentNotSigned()),
  ],
])("planned versioned enrolment: %s", (_what, form, previous, expected) => {
  expect(outcomeOf(() => planEnrolment(form, previous))).toEqual(expected);
});

test("a planned versioned enrolment stores its version and account state; an unversioned one none", () => {
  expect(planEnrolment(versioned()).enrolment).toMatchObject({ version: 3, keys: bobFingerprint, kdfVersion: 2 });
  expect(planEnrolment(enrolmentForm()).enrolment.version).toBeUndefined();
});

test("a planned enrolment stores the copy's salt and each share under the enrolment", () => {
  const plan = planEnrolment(enrolmentForm());
  expect(plan.enrolment).toMatchObject({ enrolmentId: "e-1", userId: user, orgId: org, threshold: 2, kdfSalt: "salt-1" });
  expect(plan.shares.map((s) => [s.enrolmentId, s.trusteeId])).toEqual([
    ["e-1", "a"],
    ["e-1", "b"],
    ["e-1", "c"],
  ]);
});

const trusteeKeys = (id: string, p: Partial<TrusteeKeys> = {}): TrusteeKeys => ({
  publicKey: `rsa-${id}`,
  signingPublicKey: `ed-${id}`,
  ...p,
});
const stored = (kdfSalt = "salt-1", threshold = 2, keys?: string): StoredEnrolment => ({
  enrolment: {
    enrolmentId: "e-1",
    userId: user,
    orgId: org,
    threshold,
    copy: "c",
    signature: "s",
    kdfSalt,
    createdAt: now,
    ...(keys !== undefined && { version: 1, keys, kdfVersion: 2 }),
  },
  shares: ["a", "b", "c"].map((id) => ({
    enrolmentId: "e-1",
    trusteeId: id as UserId,
    encryptedShare: "x",
    trusteeKeys: keyFingerprint(trusteeKeys(id)),
  })),
});
const holders = (...ps: Array<[string, Partial<TrusteeKeys>?]>) => new Map(ps.map(([id, p]) => [id as UserId, trusteeKeys(id, p)]));

test.each<[string, StoredEnrolment | null, ReadonlyMap<UserId, TrusteeKeys>, boolean | ReturnType<typeof outcomeOf>]>([
  ["all trustees hold their keys", stored(), holders(["a"], ["b"], ["c"]), true],
  ["k of them do", stored(), holders(["a"], ["c"]), true],
  ["one rotated, one left: fewer than k", stored(), holders(["a"], ["b", { publicKey: "rsa-new" }], ["c", { removedAt: now }]), false],
  ["made under another password", stored("salt-0"), holders(["a"], ["b"], ["c"]), false],
  ["versioned, under the account's keys", stored("salt-1", 2, bobFingerprint), holders(["a"], ["b"], ["c"]), true],
  ["versioned, under keys rotated since", stored("salt-1", 2, "ab".repeat(32)), holders(["a"], ["b"], ["c"]), false],
  ["no enrolment", null, holders(), asRefusal(noRecoveryEnrolment())],
])("enrolment current: %s", (_what, found, trustees, expected) => {
  let current: boolean | undefined;
  const outcome = outcomeOf(() => (current = decideEnrolmentCurrent(found, bob, trustees).current));
  expect(outcome === "ok" ? current : outcome).toEqual(expected);
});

test("unenrolment: nothing deleted is no enrolment", () => {
  expect(outcomeOf(() => decideUnenrolment(true))).toBe("ok");
  expect(outcomeOf(() => decideUnenrolment(false))).toEqual(asRefusal(noRecoveryEnrolment()));
});

const request = (p: Partial<RecoveryRequest> = {}): RecoveryRequest => ({
  requestId: "r-1",
  userId: user,
  orgId: org,
  enrolmentId: "e-1",
  publicKey: Buffer.from("one-time key").toString("base64"),
  tokenHash: "h",
  status: "pending",
  createdAt: now,
  expiresAt: "2026-12-01T00:00:00.000Z",
  ...p,
});

test.each<[string, RecoveryRequest | null, ReturnType<typeof outcomeOf>]>([
  ["the caller's own", request(), "ok"],
  ["another account's", request({ userId: "u-ann" as UserId }), asRefusal(recoveryRequestNotFound())],
  ["none", null, asRefusal(recoveryRequestNotFound())],
])("cancel: %s", (_what, r, expected) => {
  expect(outcomeOf(() => decideRecoveryCancel(r, user))).toEqual(expected);
});

test("cancel: a request ended meanwhile is not found", () => {
  expect(outcomeOf(() => decideRecoveryCancelled(true))).toBe("ok");
  expect(outcomeOf(() => decideRecoveryCancelled(false))).toEqual(asRefusal(recoveryRequestNotFound()));
});

const proof = (key = bobKeys.privateKey) => signed(sessionProofBytes({ requestId: "r-1", userId: user }), key);
const approvedBy = (...ids: string[]) => ids.map((id) => ({ trusteeId: id as UserId }));
const session = (p: Partial<Parameters<typeof planRecoverySession>[0]> = {}, form: { signature?: string; deviceName?: string } = {}) =>
  outcomeOf(() =>
    planRecoverySession(
      { request: request(), tokenHash: "h", enrolment: stored(), approvals: approvedBy("a", "b"), user: bob, now, ...p },
      { signature: proof(), ...form },
    ),
  );

test.each<[string, ReturnType<typeof session>, ReturnType<typeof outcomeOf>]>([
  ["k approvals, signed with the recovered key", session(), "ok"],
  ["another request's secret", session({ tokenHash: "other" }), asRefusal(recoveryTokenWrong())],
  ["a cancelled request", session({ request: request({ status: "cancelled" }) }), asRefusal(recoveryNotPending())],
  ["approvals of one trustee and a stranger", session({ approvals: approvedBy("a", "x") }), asRefusal(tooFewApprovals(1, 2))],
  ["the account gone", session({ user: null }), asRefusal(recoveryTokenWrong())],
  ["the account removed", session({ user: { ...bob, removedAt: now } }), asRefusal(removedFromOrg())],
  ["an enrolment under another password", session({ enrolment: stored("salt-0") }), asRefusal(recoveryNotPending())],
  ["signed with another key", session({}, { signature: proof(annKeys.privateKey) }), asRefusal(approvalNotSigned())],
  ["a device name that does not print", session({}, { deviceName: "\u0000" }), asRefusal(badDeviceName())],
  // The order: removed from the organization comes before a wrong signature.
  ["removed, and signed with another key", session({ user: { ...bob, removedAt: now } }, { signature: "" }), asRefusal(removedFromOrg())],
])("recovery session: %s", (_what, outcome, expected) => {
  expect(outcome).toEqual(expected);
});

test("a recovery session is named 'recovered device' unless the device names itself", () => {
  const plan = (deviceName?: string) =>
    planRecoverySession(
      { request: request(), tokenHash: "h", enrolment: stored(), approvals: approvedBy("a", "b"), user: bob, now },
      { signature: proof(), ...(deviceName !== undefined && { deviceName }) },
    );
  expect(plan().deviceName).toBe("recovered device");
  expect(plan(" Laptop ").deviceName).toBe("Laptop");
});

test("a request opened by another device meanwhile is no longer pending", () => {
  expect(outcomeOf(() => decideRecoveryOpened(true))).toBe("ok");
  expect(outcomeOf(() => decideRecoveryOpened(false))).toEqual(asRefusal(recoveryNotPending()));
});

const share = Buffer.from("re-wrapped").toString("base64");
const approvalSignature = (key = annKeys.privateKey) =>
  signed(
    approvalBytes({
      requestId: "r-1",
      userId: user,
      enrolmentId: "e-1",
      trusteeId: "a",
      requestKey: hashOf(request().publicKey),
      share: hashOf(share),
    }),
    key,
  );
const approval = (p: Partial<Parameters<typeof planRecoveryApproval>[0]> = {}, signature = approvalSignature()) =>
  outcomeOf(() =>
    planRecoveryApproval({ request: request(), trustee: ann, enrolment: stored(), now, ...p }, { encryptedShare: share, signature }),
  );

test.each<[string, ReturnType<typeof approval>, ReturnType<typeof outcomeOf>]>([
  ["a trustee's, signed", approval(), "ok"],
  ["none", approval({ request: null }), asRefusal(recoveryRequestNotFound())],
  ["a request of another organization", approval({ request: request({ orgId: "o-2" as OrgId }) }), asRefusal(recoveryRequestNotFound())],
  ["a completed request", approval({ request: request({ status: "completed" }) }), asRefusal(recoveryNotPending())],
  ["by someone who holds no share", approval({ trustee: { ...ann, userId: "m" as UserId } }), asRefusal(notATrustee())],
  ["the enrolment gone", approval({ enrolment: null }), asRefusal(notATrustee())],
  ["signed with another key", approval({}, approvalSignature(bobKeys.privateKey)), asRefusal(approvalNotSigned())],
  // The order: a request no longer pending comes before a wrong signature.
  ["an expired request, unsigned", approval({ request: request({ expiresAt: now }) }, ""), asRefusal(recoveryNotPending())],
])("planned approval: %s", (_what, outcome, expected) => {
  expect(outcome).toEqual(expected);
});

test("a planned approval stores the trustee's re-wrapped share and signature", () => {
  const plan = planRecoveryApproval(
    { request: request(), trustee: ann, enrolment: stored(), now },
    { encryptedShare: share, signature: approvalSignature() },
  );
  expect(plan.approval).toEqual({
    requestId: "r-1",
    trusteeId: "a",
    encryptedShare: share,
    signature: approvalSignature(),
    approvedAt: now,
  });
});

test.each<[string, Partial<RecoveryRequest>, string]>([
  ["pending", {}, "pending"],
  ["opened", { status: "opened" }, "opened"],
  ["completed", { status: "completed" }, "completed"],
  ["pending but expired", { expiresAt: now }, "cancelled"],
  ["opened but expired", { status: "opened", expiresAt: now }, "cancelled"],
])("a request's status as shown: %s", (_what, p, expected) => {
  expect(recoveryStatusAt(request(p), now)).toBe(expected);
});

test.each<[string, Partial<RecoveryRequest>, StoredEnrolment | null, number, { status: string; threshold: number; disclose: boolean }]>([
  ["k approvals", {}, stored("salt-1", 3), 3, { status: "pending", threshold: 3, disclose: true }],
  ["fewer", {}, stored("salt-1", 3), 2, { status: "pending", threshold: 3, disclose: false }],
  ["an opened request, k approvals", { status: "opened" }, stored(), 2, { status: "opened", threshold: 2, disclose: true }],
  ["cancelled", { status: "cancelled" }, stored(), 2, { status: "cancelled", threshold: 2, disclose: false }],
  ["expired", { expiresAt: now }, stored(), 2, { status: "cancelled", threshold: 2, disclose: false }],
  ["the enrolment replaced", { enrolmentId: "e-0" }, stored("salt-1", 3), 3, { status: "pending", threshold: 2, disclose: false }],
  ["the enrolment gone", {}, null, 3, { status: "pending", threshold: 2, disclose: false }],
])("polling a request: %s", (_what, p, found, approvals, expected) => {
  expect(decideRecoveryState(request(p), found?.enrolment ?? null, approvals, now)).toEqual(expected);
});
