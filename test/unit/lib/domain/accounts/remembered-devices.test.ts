/** When a remembered device skips a login's second step (lib/domain/accounts/remembered-devices.ts), and who may forget one. */
import {
  planForgetDevice,
  planRememberedLogin,
  rememberedOverCap,
  type RememberedDevice,
  type RememberedLoginPlan,
} from "../../../../../lib/domain/accounts/remembered-devices";
import { rememberedDeviceNotFound } from "../../../../../lib/domain/accounts/refusals";
import type { UserId } from "../../../../../lib/domain/ids";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const ada = "00000000-0000-4000-8000-00000000000a" as UserId;
const bob = "00000000-0000-4000-8000-00000000000b" as UserId;
const now = "2026-11-29T12:00:00.000Z";
const laptop: RememberedDevice = {
  deviceId: "d1",
  userId: ada,
  deviceName: "laptop",
  createdAt: "2026-11-01T12:00:00.000Z",
  lastUsedAt: "2026-11-20T12:00:00.000Z",
  expiresAt: "2026-12-01T12:00:00.000Z",
};
const login = { sentToken: true, device: laptop, userId: ada, passwordRight: true, now };

test.each<[string, Parameters<typeof planRememberedLogin>[0], RememberedLoginPlan]>([
  ["the account's own device, unexpired, with the right password: no second step", login, { skipSecondStep: true, deviceId: "d1" }],
  ["no token sent", { ...login, sentToken: false, device: null }, { skipSecondStep: false, because: "NO_DEVICE_TOKEN" }],
  ["a token no device has", { ...login, device: null }, { skipSecondStep: false, because: "UNKNOWN_DEVICE" }],
  ["another account's device", { ...login, userId: bob }, { skipSecondStep: false, because: "OTHER_ACCOUNTS_DEVICE" }],
  ["a device past its expiry", { ...login, now: "2026-12-01T12:00:00.000Z" }, { skipSecondStep: false, because: "DEVICE_EXPIRED" }],
  [
    "a wrong password: the second step, as always",
    { ...login, passwordRight: false },
    { skipSecondStep: false, because: "WRONG_PASSWORD" },
  ],
  [
    "a policy that asks a factor at each login",
    { ...login, factorEachLogin: true },
    { skipSecondStep: false, because: "SECOND_FACTOR_EACH_LOGIN" },
  ],
])("%s", (_, args, expected) => {
  expect(planRememberedLogin(args)).toEqual(expected);
});

test.each<[string, () => unknown, AppError | "ok"]>([
  ["one's own device", () => planForgetDevice(laptop, ada), "ok"],
  ["another account's device: not found, as one that does not exist", () => planForgetDevice(laptop, bob), rememberedDeviceNotFound()],
  ["a device that does not exist", () => planForgetDevice(null, ada), rememberedDeviceNotFound()],
])("forget: %s", (_, rule, expected) => {
  expect(outcomeOf(rule)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test("past the cap, the least recently used devices go", () => {
  expect(rememberedOverCap(["a", "b", "c"], 2)).toEqual(["c"]);
  expect(rememberedOverCap(["a", "b"], 2)).toEqual([]);
});
