/**
 * Sends: a text or a file shared by link, sealed on the client (lib/domain/sends/decisions.ts; the
 * format: docs/protocol/sends.md). A member makes one with its sealed size, sends its parts (one
 * request each, again after a break) and finishes it; then anyone with its link opens it (a public
 * route: one view), and reads a file's other parts with the access the open answered.
 */
import { MAX_SEND_PART_SEALED, MAX_SEND_PARTS } from "../../../protocol/formats/sends";
import { MAX_SEND_VIEWS } from "../../domain/sends/decisions";
import * as p from "../params";
import { created, noContent, ok, type RouteDef } from "./route-def";

/** A part's index in a path: the gateway lets only digits through (lib/http/request-body.ts). */
const partIndex = {
  type: "number",
  integer: true,
  convert: true,
  min: 0,
  max: MAX_SEND_PARTS - 1,
  openapi: { type: "integer", minimum: 0, maximum: MAX_SEND_PARTS - 1 },
} as const;

/** The proof of a send's password (32 bytes, base64): never the password itself. */
const passwordProof = { ...p.authHash, optional: true } as const;
/** The proof of a send's link (32 bytes, base64): derived from its secret, never the secret itself. */
const accessProof = p.authHash;

export const SEND_ROUTES = [
  {
    method: "POST",
    path: "/sends",
    action: "sends.create",
    summary:
      "Make a send: its id (the client's, bound into its key), sealed size and part count, its link's access proof, lifetime (`expiresIn`, a week if left out), views and password proof; checked against the size, per-member and organization limits and policies",
    params: {
      ...p.STRICT,
      sendId: p.uuid,
      parts: { type: "number", integer: true, min: 1, max: MAX_SEND_PARTS },
      bytes: { type: "number", integer: true, min: 0, max: Number.MAX_SAFE_INTEGER },
      expiresIn: { type: "string", min: 1, max: 16, optional: true },
      maxViews: { type: "number", integer: true, min: 1, max: MAX_SEND_VIEWS, optional: true },
      accessProof,
      passwordProof,
      ownerNote: p.base64(4096),
    },
    reply: created("SendStatus"),
  },
  {
    method: "GET",
    path: "/sends",
    action: "sends.list",
    summary: "The caller's sends, newest first, until they expire",
    reply: ok("SendList"),
  },
  {
    method: "PUT",
    path: "/sends/:sendId/parts/:index",
    action: "sends.putPart",
    streamBody: true,
    summary: "Store one sealed part of an unfinished send, `{ data }` (base64), in place of one sent before at that index",
    params: { ...p.STRICT, sendId: p.pathId, index: partIndex, data: p.base64(MAX_SEND_PART_SEALED) },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/sends/:sendId/finish",
    action: "sends.finish",
    summary: "Finish a send once every part is stored: from then on its link opens it",
    params: { ...p.STRICT, sendId: p.pathId },
    reply: ok("Send"),
  },
  {
    method: "DELETE",
    path: "/sends/:sendId",
    action: "sends.remove",
    summary: "Delete a send and its parts at once (its sender)",
    params: { sendId: p.pathId },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/sends/:sendId/open",
    action: "sends.open",
    public: true,
    summary:
      "Open a send by its link (the link's access proof), with its password's proof if it has one (counted as logins are): one view taken; answers the sealed header and an access to the other parts. `404` once expired, deleted, out of views, or without the link's proof",
    params: { ...p.STRICT, sendId: p.pathId, accessProof, passwordProof },
    reply: ok("SendOpened"),
  },
  {
    method: "POST",
    path: "/sends/:sendId/parts/:index/read",
    action: "sends.readPart",
    public: true,
    largeAnswer: true,
    summary: "One sealed part of an opened send, by the access its open answered (for 10 minutes)",
    params: { ...p.STRICT, sendId: p.pathId, index: partIndex, access: { type: "string", min: 1, max: 512 } },
    reply: ok("SendPart"),
  },
] as const satisfies readonly RouteDef[];
