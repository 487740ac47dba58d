/** The shapes of the sends' answers (lib/http/routes/sends.ts): what the server keeps of a send, never its title or key. */
import { arrayOf, base64, integer, object, string, timestamp, uuid, type JsonSchema } from "./json-schema";

const maxViews: JsonSchema = { type: ["integer", "null"], minimum: 1 };

const sendFields = {
  sendId: uuid,
  parts: integer(1),
  bytes: integer(0),
  maxViews,
  views: integer(0),
  hasPassword: { type: "boolean" },
  ownerNote: string,
  createdAt: timestamp,
  expiresAt: timestamp,
  complete: { type: "boolean" },
  partsGone: { type: "boolean" },
};

export const SEND_SCHEMAS = {
  // A send as its sender lists it: its sealed note (title and link secret, sealed to the sender's own key) and its counts.
  Send: object(sendFields),
  // The same, with the parts stored so far: what a resumed send uploads next.
  SendStatus: object({ ...sendFields, received: arrayOf(integer(0)) }),
  SendList: object({ sends: arrayOf(object(sendFields)) }),
  // An open: the sealed header (part 0), the counts after this view, and the access that reads the other parts.
  SendOpened: object({
    sendId: uuid,
    parts: integer(1),
    bytes: integer(0),
    expiresAt: timestamp,
    viewsLeft: { type: ["integer", "null"], minimum: 0 },
    header: base64,
    access: string,
  }),
  SendPart: object({ index: integer(0), data: base64 }),
} satisfies Record<string, JsonSchema>;
