/**
 * The documents of sends (SQL: migration 026's `sends` and `send_parts`). A part's bytes are in its
 * document, not GridFS: a send is small and lives days, and its delete takes its bytes in the
 * same transaction as the send.
 */
import type { Binary } from "mongodb";
import type { OrgId, SendId, UserId } from "../../../domain/ids";
import type { SendState } from "../../../domain/sends/decisions";
import type { SendRecord } from "../../port";

/** A send; `_id` is its id. */
export interface SendDoc {
  _id: SendId;
  /** Its sender's organization, whose quota and policy it is under. */
  orgId: OrgId;
  ownerId: UserId;
  parts: number;
  /** Sealed bytes its parts hold, as made: the room it takes of the quota. */
  bytes: number;
  maxViews: number | null;
  views: number;
  /** A slow hash of the password's proof (lib/auth/auth-hash.ts), or null. */
  /** SHA-256 of the link's access proof, hex. */
  accessHash: string;
  passwordHash: string | null;
  ownerNote: string;
  complete: boolean;
  createdAt: string;
  expiresAt: string;
  /** When its parts go (its last view was taken), else null. */
  partsGoneAt: string | null;
  /** Bumped by every write of the send (a part, a finish, an open, a delete): two at once conflict, and one retries on the other's outcome. */
  writeSeq?: number;
}

/** One sealed part; `_id` is `sendPartKey(sendId, idx)`. */
export interface SendPartDoc {
  _id: string;
  sendId: SendId;
  idx: number;
  sealedBytes: number;
  data: Binary;
}

export const sendPartKey = (sendId: SendId, idx: number): string => `${sendId}/${idx}`;

/** The sender's view of a send; without `now`, a send whose last view was taken counts as gone. */
export function toSendRecord(d: SendDoc, now?: string): SendRecord {
  return {
    sendId: d._id,
    ownerId: d.ownerId,
    orgId: d.orgId,
    parts: d.parts,
    bytes: d.bytes,
    maxViews: d.maxViews,
    views: d.views,
    hasPassword: d.passwordHash !== null,
    ownerNote: d.ownerNote,
    createdAt: d.createdAt,
    expiresAt: d.expiresAt,
    complete: d.complete,
    partsGone: d.partsGoneAt !== null && (now === undefined || d.partsGoneAt <= now),
  };
}

export const sendStateOf = (d: SendDoc | null | undefined): SendState | undefined =>
  d
    ? {
        ownerId: d.ownerId,
        parts: d.parts,
        bytes: d.bytes,
        complete: d.complete,
        expiresAtMs: Date.parse(d.expiresAt),
        maxViews: d.maxViews,
        views: d.views,
        partsGoneAtMs: d.partsGoneAt === null ? null : Date.parse(d.partsGoneAt),
      }
    : undefined;
