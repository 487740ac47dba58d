/** `client.sessions`: the account's signed-in devices (the part: session.ts). */
import type { Parts } from "../parts";
import type { SessionInfo } from "../types";
import { lc } from "./ids";
import { fromBase64Url, fromUtf8 } from "../../../protocol/encoding";

/** A device that skips the account's second step at login (remembered at a second step, for 30 days). */
export interface RememberedDeviceInfo {
  deviceId: string;
  deviceName: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
}

export interface SessionsApi {
  /** The account's sessions, this one among them. */
  list(): Promise<SessionInfo[]>;
  /** Ends one session: its refresh token at once, its access tokens within the server's SESSION_CHECK_INTERVAL. */
  end(sessionId: string): Promise<void>;
  /** Ends every session but this one; answers how many ended. */
  endOthers(): Promise<number>;
  /** This client's session, as its own access token names it (not as a list the server sends marks it). */
  currentId(): string | undefined;
  /** The devices that skip this account's second step at login (what the server says of them, shown as its account). */
  rememberedDevices(): Promise<RememberedDeviceInfo[]>;
  /** Forgets a remembered device: its next login asks the second factor again. */
  forgetDevice(deviceId: string): Promise<void>;
}

export function sessionsApi({ session, core }: Pick<Parts, "session" | "core">): SessionsApi {
  return {
    rememberedDevices: async () =>
      (await core.http.request<{ devices: RememberedDeviceInfo[] }>("GET", "/users/me/remembered-devices")).devices,
    forgetDevice: (deviceId) => core.http.request<void>("DELETE", `/users/me/remembered-devices/${encodeURIComponent(lc(deviceId))}`),
    list: () => session.sessions(),
    end: (sessionId) => session.endSession(lc(sessionId)),
    endOthers: () => session.endOtherSessions(),
    currentId: () => sessionOfToken(core.http.currentTokens?.accessToken),
  };
}

/** The `sid` claim of an access token this client holds (its own: read, not verified). */
function sessionOfToken(accessToken: string | undefined): string | undefined {
  try {
    const claims = JSON.parse(fromUtf8(fromBase64Url(accessToken?.split(".")[1] ?? ""))) as { sid?: unknown };
    return typeof claims.sid === "string" ? claims.sid : undefined;
  } catch {
    return undefined;
  }
}
