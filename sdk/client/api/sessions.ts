/** `client.sessions`: the account's signed-in devices (the part: session.ts). */
import type { Parts } from "../parts";
import type { SessionInfo } from "../types";
import { lc } from "./ids";

export interface SessionsApi {
  /** The account's sessions, this one among them. */
  list(): Promise<SessionInfo[]>;
  /** Ends one session: its refresh token at once, its access tokens within the server's SESSION_CHECK_INTERVAL. */
  end(sessionId: string): Promise<void>;
  /** Ends every session but this one; answers how many ended. */
  endOthers(): Promise<number>;
}

export function sessionsApi({ session }: Pick<Parts, "session">): SessionsApi {
  return {
    list: () => session.sessions(),
    end: (sessionId) => session.endSession(lc(sessionId)),
    endOthers: () => session.endOtherSessions(),
  };
}
