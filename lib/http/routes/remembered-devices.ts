/** The devices remembered at a login's second step (services/auth.service.ts, lib/domain/accounts/remembered-devices.ts). */
import * as p from "../params";
import { ok, noContent, type RouteDef } from "./route-def";

export const REMEMBERED_DEVICE_ROUTES = [
  {
    method: "GET",
    path: "/users/me/remembered-devices",
    action: "auth.rememberedDevices",
    summary: "The devices that skip the caller's second step at login (remembered for 30 days)",
    reply: ok("RememberedDeviceList"),
  },
  {
    method: "DELETE",
    path: "/users/me/remembered-devices/:deviceId",
    action: "auth.forgetDevice",
    summary: "Forget a remembered device: its next login asks the second factor again",
    params: { deviceId: p.pathId },
    reply: noContent,
  },
] as const satisfies readonly RouteDef[];
