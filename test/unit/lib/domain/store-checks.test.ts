/**
 * The rules a store applies to what it read under its locks (lib/domain/store-checks.ts): each row
 * names the refusal it expects, compared with the named constructor's own.
 */
import type { VaultId } from "../../../../lib/domain/ids";
import type { HeldVault } from "../../../../lib/domain/accounts/key-rotation";
import {
  approvedAlready,
  emailTaken,
  inviteRequired,
  keyLogEntryStale,
  passwordChangedMeanwhile,
  personalVaultsChanged,
  rotationVaultsChanged,
  signingKeyTaken,
  statementAlreadySet,
} from "../../../../lib/domain/accounts/refusals";
import { inviteHasStatement, inviteNotFound, inviteNotRedeemable, notTheInvitedEmail } from "../../../../lib/domain/orgs/refusals";
import {
  decideFirstUser,
  decideInviteRedemption,
  decideInviteStatement,
  decideKeyLogHead,
  decideNewApproval,
  decideNewUserFree,
  decidePersonalVaultsLocked,
  decideRotationVaultsLocked,
  decideSessionStart,
  decideStatementSet,
} from "../../../../lib/domain/store-checks";
import type { VaultSnapshot } from "../../../../lib/domain/vaults/decisions";
import { asRefusal, outcomeOf } from "../../../helpers/refusal";

const now = "2026-11-24T12:00:00.000Z";
const later = "2026-11-25T00:00:00.000Z";
const statement = { version: 1, signature: "c2ln" };
const other = { version: 1, signature: "b3RoZXI=" };

test.each<[string, () => unknown, ReturnType<typeof outcomeOf>]>([
  ["the first user opens an organization", () => decideFirstUser(true, false), "ok"],
  ["a later one without an invite", () => decideFirstUser(true, true), asRefusal(inviteRequired())],
  ["a server that takes anyone", () => decideFirstUser(false, true), "ok"],
  ["a new email and key", () => decideNewUserFree({ email: false, signingKey: false }), "ok"],
  ["an email taken", () => decideNewUserFree({ email: true, signingKey: false }), asRefusal(emailTaken())],
  ["a signing key taken", () => decideNewUserFree({ email: false, signingKey: true }), asRefusal(signingKeyTaken())],
  [
    "an invite, pending, for this address",
    () => decideInviteRedemption({ status: "pending", expiresAt: later, email: "a@x.test" }, "a@x.test", now),
    "ok",
  ],
  ["no invite", () => decideInviteRedemption(undefined, "a@x.test", now), asRefusal(inviteNotFound())],
  [
    "an invite used",
    () => decideInviteRedemption({ status: "used", expiresAt: later, email: "a@x.test" }, "a@x.test", now),
    asRefusal(inviteNotRedeemable()),
  ],
  [
    "an invite expired",
    () => decideInviteRedemption({ status: "pending", expiresAt: now, email: "a@x.test" }, "a@x.test", now),
    asRefusal(inviteNotRedeemable()),
  ],
  [
    "an invite for another address",
    () => decideInviteRedemption({ status: "pending", expiresAt: later, email: "b@x.test" }, "a@x.test", now),
    asRefusal(notTheInvitedEmail()),
  ],
  ["a login at the version it compared", () => decideSessionStart(2, 2), "ok"],
  ["a login after a password change", () => decideSessionStart(3, 2), asRefusal(passwordChangedMeanwhile())],
  ["a statement not set yet", () => decideStatementSet(undefined, statement, "keyStatement"), "ok"],
  ["the same statement again", () => decideStatementSet(statement, statement, "kdfStatement"), "ok"],
  ["another key statement", () => decideStatementSet(statement, other, "keyStatement"), asRefusal(statementAlreadySet("keyStatement"))],
  ["another KDF statement", () => decideStatementSet(statement, other, "kdfStatement"), asRefusal(statementAlreadySet("kdfStatement"))],
  ["an invite without a statement", () => decideInviteStatement(null, statement), "ok"],
  ["an invite with this statement", () => decideInviteStatement(statement, statement), "ok"],
  ["an invite with another statement", () => decideInviteStatement(other, statement), asRefusal(inviteHasStatement())],
  ["a first approval", () => decideNewApproval(false), "ok"],
  ["a second approval", () => decideNewApproval(true), asRefusal(approvedAlready())],
  ["a rotation on the head it checked", () => decideKeyLogHead(3, 3), "ok"],
  ["a rotation after another", () => decideKeyLogHead(4, 3), asRefusal(keyLogEntryStale(4))],
])("%s", (_what, rule, expected) => {
  expect(outcomeOf(rule)).toEqual(expected);
});

describe("vaults locked, still exactly the user's", () => {
  const v = (id: string) => id as VaultId;
  const snapshot = (id: string) => ({ vault: { vaultId: v(id) }, members: [] }) as unknown as VaultSnapshot;
  const held = (id: string): HeldVault => ({ snapshot: snapshot(id), sentWraps: [] });

  test.each<[string, string[], string[], ReturnType<typeof outcomeOf>]>([
    ["the same vaults", ["a", "b"], ["a", "b"], "ok"],
    ["one gone since (left out)", ["a"], ["a", "b"], "ok"],
    ["one made since", ["a", "b", "c"], ["a", "b"], asRefusal(personalVaultsChanged(1, 0))],
  ])("a password change: %s", (_what, now, locked, expected) => {
    expect(outcomeOf(() => decidePersonalVaultsLocked(now.map(v), locked.map(snapshot)))).toEqual(expected);
  });

  test.each<[string, string[], string[], ReturnType<typeof outcomeOf>]>([
    ["the same vaults", ["a", "b"], ["a", "b"], "ok"],
    ["one left since (left out)", ["b"], ["a", "b"], "ok"],
    ["one shared since", ["a", "b", "c"], ["a", "b"], asRefusal(rotationVaultsChanged(1, 0))],
  ])("a key rotation: %s", (_what, now, locked, expected) => {
    expect(outcomeOf(() => decideRotationVaultsLocked(now.map(v), locked.map(held)))).toEqual(expected);
  });

  test("answers the locked ones still held", () => {
    expect(decidePersonalVaultsLocked([v("a")], [snapshot("a"), snapshot("b")]).map((s) => s.vault.vaultId)).toEqual(["a"]);
  });
});
