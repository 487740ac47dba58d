/**
 * Emergency access grants (lib/domain/emergency/decisions.ts for the rules): one per grantor and
 * grantee. Each write that ends a session a grant opened ends it in the same transaction, and
 * answers it so the caller can tell the gateways.
 */
import type { GrantRecord } from "../../domain/emergency/decisions";
import type { UserId } from "../../domain/ids";
import type { WithEvents } from "./outbox";

export type { GrantRecord } from "../../domain/emergency/decisions";

export interface EmergencyStore {
  /** One grant by id (null: none). */
  getGrant(args: { grantId: string }): Promise<GrantRecord | null>;
  /** The grant from a grantor to a grantee (null: none). */
  grantBetween(args: { grantorId: UserId; granteeId: UserId }): Promise<GrantRecord | null>;
  /** The grants a member made and the ones made to them, oldest first. */
  listGrants(args: { userId: UserId }): Promise<{ granted: GrantRecord[]; received: GrantRecord[] }>;
  /**
   * A new grant (`expect: null`; 409 when the pair or the id is taken meanwhile), or the grant
   * `expect` made again: its key, signature and account state replaced, its request kept; refused
   * (409) when the grant is gone, or when a request came meanwhile and `frozen` was not planned for
   * (then the level and wait must be unchanged).
   */
  writeGrant(
    args: {
      grant: Omit<GrantRecord, "requestedAt" | "refusedAt" | "sessionId" | "openedAt" | "createdAt" | "updatedAt">;
      expect: string | null;
      now: string;
    } & WithEvents,
  ): Promise<void>;
  /** The grantee asks, if nobody has (false: the grant is gone, or asked for meanwhile). */
  requestGrant(args: { grantId: string; granteeId: UserId; now: string } & WithEvents): Promise<boolean>;
  /** The grantor refuses a standing request: idle again, its session ended (false: no request stands now). */
  refuseGrant(
    args: { grantId: string; grantorId: UserId; now: string } & WithEvents,
  ): Promise<{ refused: boolean; endedSessions: string[] }>;
  /** The grant deleted by either party, its session ended (false: gone already). */
  deleteGrant(args: { grantId: string; actorId: UserId; now: string } & WithEvents): Promise<{ deleted: boolean; endedSessions: string[] }>;
  /**
   * Records the session a released grant just opened as its grantor, ending the one it opened
   * before; answers false when the grant is gone or its request no longer stands as it was released
   * (`requestedAt`): the caller then ends the new session.
   */
  openedGrantSession(
    args: { grantId: string; requestedAt: string; sessionId: string; now: string } & WithEvents,
  ): Promise<{ recorded: boolean; endedSessions: string[] }>;
  /** The takeover grant whose session this is, opened since `since` (null: none). */
  findTakeover(args: { userId: UserId; sessionId: string; since: string }): Promise<string | null>;
}
