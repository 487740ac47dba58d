/** The shapes of emergency access answers (lib/http/routes/emergency.ts): what the server keeps of a grant, never what its key opens. */
import { EMERGENCY_LEVELS } from "../../protocol/formats/emergency";
import { arrayOf, base64, integer, object, oneOfValues, string, timestamp, uuid, type JsonSchema } from "./json-schema";

const grantFields = {
  grantId: uuid,
  grantorId: uuid,
  granteeId: uuid,
  level: oneOfValues([...EMERGENCY_LEVELS]),
  waitHours: integer(1),
  granteeKeys: string,
  keys: string,
  kdfVersion: integer(1),
  wrapped: string,
  signature: base64,
  createdAt: timestamp,
  updatedAt: timestamp,
  // What it is now: `stale` when the grantor's keys or password, or the grantee's keys, changed since it was made.
  status: oneOfValues(["idle", "waiting", "released", "stale"]),
};

const grantOptional = { requestedAt: timestamp, availableAt: timestamp, refusedAt: timestamp, openedAt: timestamp };

export const EMERGENCY_SCHEMAS = {
  // A grant as either party sees it: what the grantor signed (the wrapped key's hash, not the key), and its request.
  EmergencyGrant: object(grantFields, grantOptional),
  EmergencyGrants: object({ granted: arrayOf(object(grantFields, grantOptional)), received: arrayOf(object(grantFields, grantOptional)) }),
} satisfies Record<string, JsonSchema>;
