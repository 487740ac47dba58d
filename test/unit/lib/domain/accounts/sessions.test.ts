/** Sessions (lib/domain/accounts/sessions.ts), as tables: a device name in, kept or refused; a session in, live or the named refusal. */
import {
  decideDeviceName,
  decideSessionEnd,
  decideSessionLive,
  shouldTouch,
  UNNAMED_DEVICE,
} from "../../../../../lib/domain/accounts/sessions";
import type { UserId } from "../../../../../lib/domain/ids";
import {
  sessionEnded,
  sessionEndedByFactorChange,
  sessionNotFound,
  tokenWithoutSession,
} from "../../../../../lib/domain/accounts/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, code, outcomeOf } from "../../../../helpers/refusal";

const ada = "u-ada" as UserId;
const bob = "u-bob" as UserId;
const now = "2026-11-24T12:00:00.000Z";
const live = { userId: ada, expiresAt: "2026-12-24T12:00:00.000Z" };

test.each<[string, string | undefined, string]>([
  ["none given", undefined, UNNAMED_DEVICE],
  ["trimmed", "  laptop ", "laptop"],
  ["composed (NFC)", "Cafe\u0301", "Café"],
  ["64 characters, counted as characters", "é".repeat(64), "é".repeat(64)],
  ["65 characters", "x".repeat(65), "INVALID"],
  ["empty", "", "INVALID"],
  ["only spaces", "   ", "INVALID"],
  ["a newline", "a\nb", "INVALID"],
  ["a right-to-left override", "evil\u202Egnp.exe", "INVALID"],
  ["a zero-width space", "a\u200Bb", "INVALID"],
  ["a line separator", "a\u2028b", "INVALID"],
])("device name, %s", (_what, raw, expected) => {
  let kept: string | undefined;
  const outcome = code(() => void (kept = decideDeviceName(raw)));
  expect(outcome === "ok" ? kept : outcome).toBe(expected);
});

test.each<[string, string | undefined, Parameters<typeof decideSessionLive>[1], "ok" | AppError]>([
  ["a live session of the token's user", "s", live, "ok"],
  ["a token from before sessions", undefined, live, tokenWithoutSession()],
  ["no such session (never, or swept)", "s", null, sessionEnded()],
  ["another user's session", "s", { ...live, userId: bob }, sessionEnded()],
  ["an ended session", "s", { ...live, endedAt: now }, sessionEnded()],
  ["an expired session", "s", { ...live, expiresAt: now }, sessionEnded()],
  [
    "a session ended by a change of the account's factors",
    "s",
    { ...live, endedAt: now, endedWhy: "factors-changed" },
    sessionEndedByFactorChange(),
  ],
  // Another user's session tells nothing of why it ended.
  [
    "another user's session, ended by a factor change",
    "s",
    { ...live, userId: bob, endedAt: now, endedWhy: "factors-changed" },
    sessionEnded(),
  ],
])("session check, %s", (_what, sid, session, expected) => {
  expect(outcomeOf(() => decideSessionLive(sid, session, ada, now))).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test.each<[string, Parameters<typeof decideSessionLive>[1], boolean]>([
  ["a whole session", live, false],
  ["a session that may only enrol", { ...live, enrolOnly: true }, true],
])("what a live session grants: %s", (_what, session, enrolOnly) => {
  expect(decideSessionLive("s", session, ada, now)).toEqual({ enrolOnly });
});

test.each<[string, Parameters<typeof decideSessionEnd>[0], "ok" | AppError]>([
  ["one of the caller's live sessions", live, "ok"],
  ["none", null, sessionNotFound()],
  ["another user's", { ...live, userId: bob }, sessionNotFound()],
  ["already ended", { ...live, endedAt: now }, sessionNotFound()],
  ["expired", { ...live, expiresAt: now }, sessionNotFound()],
])("ending %s", (_what, session, expected) => {
  expect(outcomeOf(() => decideSessionEnd(session, ada, now))).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test("a use is written at most once a minute", () => {
  expect(shouldTouch(0, 59_999)).toBe(false);
  expect(shouldTouch(0, 60_000)).toBe(true);
});
