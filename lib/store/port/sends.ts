/**
 * Sends: a text or a file shared by link, as sealed parts (lib/domain/sends/decisions.ts for the
 * rules, protocol/formats/sends.ts for the parts). A send and its parts are rows on every adapter:
 * they live days, not years, within the organization's quota, and a delete takes the bytes in the
 * same transaction as the send.
 */
import type { OrgId, SendId, UserId } from "../../domain/ids";
import type { SendLimits, SendPolicy, SendState } from "../../domain/sends/decisions";
import type { WithEvents } from "./outbox";

/** What the sender's list shows of a send. */
export interface SendRecord {
  sendId: SendId;
  ownerId: UserId;
  orgId: OrgId;
  parts: number;
  /** Sealed bytes its parts hold. */
  bytes: number;
  maxViews: number | null;
  views: number;
  hasPassword: boolean;
  /** The title and secret sealed to the sender's own key (opaque to the server). */
  ownerNote: string;
  createdAt: string;
  expiresAt: string;
  /** Whether its parts all arrived and it was finished: only then does its link open it. */
  complete: boolean;
  /** Whether its parts are gone (its last view was taken), though the send is listed until it expires. */
  partsGone: boolean;
}

/** A send, with the parts stored so far (its sender's view of one being made). */
export interface SendStatus extends SendRecord {
  received: number[];
}

/** What an open answers: part 0 (the header), and the counts after this view. */
export interface OpenedSend {
  sendId: SendId;
  orgId: OrgId;
  ownerId: UserId;
  parts: number;
  bytes: number;
  expiresAt: string;
  viewsLeft: number | null;
  header: Uint8Array;
}

/** What an open reads before the password is compared: the send's organization (for its policy), password hash and state. */
export interface SendGate {
  orgId: OrgId;
  accessHash: string;
  passwordHash: string | null;
  state: SendState;
}

export interface SendStore {
  /** Makes a send (planSendCreate), under its organization's lock: 409 on a used id, 413 past a limit. */
  createSend(
    args: {
      actorId: UserId;
      orgId: OrgId;
      sendId: SendId;
      parts: number;
      bytes: number;
      maxViews: number | null;
      /** SHA-256 of the link's access proof, hex. */
      accessHash: string;
      passwordHash: string | null;
      ownerNote: string;
      lifetimeMs: number;
      limits: SendLimits;
      policy: SendPolicy;
      now: string;
    } & WithEvents,
  ): Promise<SendStatus>;
  /** Stores one sealed part (planSendPartWrite), in place of one sent before at that index. */
  putPart(args: { actorId: UserId; sendId: SendId; index: number; data: Uint8Array; now: string }): Promise<void>;
  /** Finishes a send once every part is there (planSendFinish); answers a finished one as it is. */
  finishSend(args: { actorId: UserId; sendId: SendId; now: string } & WithEvents): Promise<SendRecord>;
  /** The actor's sends, newest first, expired ones not yet swept left out. */
  listSends(args: { actorId: UserId; now: string }): Promise<SendRecord[]>;
  /** Deletes a send and its parts (planSendDelete). */
  deleteSend(args: { actorId: UserId; sendId: SendId } & WithEvents): Promise<void>;
  /** What an open needs before the password (no lock: the view is taken by `openSend`); null when there is no such send. */
  sendGate(args: { sendId: SendId }): Promise<SendGate | null>;
  /** Takes one view (planSendOpen) under the send's lock and answers its header; `events` made for the send's owner and organization. */
  openSend(args: {
    sendId: SendId;
    now: string;
    policy: SendPolicy;
    events: (owner: { ownerId: UserId; orgId: OrgId }) => WithEvents["events"];
  }): Promise<OpenedSend>;
  /** One sealed part, for an open's access (planSendPartRead). */
  readPart(args: { sendId: SendId; index: number; now: string; accessOk: boolean; policy: SendPolicy }): Promise<Uint8Array>;
  /** Deletes expired sends, parts whose last view was taken, and sends never finished that began before `staleBefore`; how many sends. */
  purgeSends(args: { now: string; staleBefore: string }): Promise<number>;
}
