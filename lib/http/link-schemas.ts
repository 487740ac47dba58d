/** The signed links' shapes as the API answers them (the formats: protocol/formats/). */
import { ITEM_LINK_OPS } from "../../protocol/formats/item-log";
import { ROSTER_OPS } from "../../protocol/formats/roster";
import { VAULT_ROLES, VAULT_TYPES } from "../domain/types";
import { arrayOf, base64, hex64, integer, object, oneOfValues, string, timestamp, uuid } from "./json-schema";

export const publicKeys = { publicKey: base64, signingPublicKey: base64, publicKeySignature: base64 };

/** Any link may carry the audit head its signer verified (both fields or neither: `AuditClaim`, protocol/formats/roster.ts). */
const auditClaim = { auditSeq: integer(1), auditHead: hex64 };

export const rosterLink = object(
  {
    vaultId: uuid,
    seq: integer(0),
    prev: hex64,
    op: oneOfValues(ROSTER_OPS),
    actorId: uuid,
    at: timestamp,
    keyVersion: integer(1),
    wraps: arrayOf(object({ userId: uuid, sha256: hex64 }, { kdfVersion: integer(1), keyLogVersion: integer(1) })),
    sig: base64,
  },
  {
    vaultType: oneOfValues(VAULT_TYPES),
    subjectId: uuid,
    role: oneOfValues(VAULT_ROLES),
    subjectKey: string,
    members: arrayOf(object({ userId: uuid, role: oneOfValues(VAULT_ROLES), key: string })),
    memberDigest: string,
    name: string,
    ...auditClaim,
  },
);

export const keyLogEntry = object(
  { userId: uuid, version: integer(1), prev: hex64, ...publicKeys },
  { at: timestamp, sig: base64, selfSig: base64 },
);

export const itemLink = object(
  {
    vaultId: uuid,
    seq: integer(0),
    prev: hex64,
    op: oneOfValues(ITEM_LINK_OPS),
    actorId: uuid,
    at: timestamp,
    keyVersion: integer(1),
    rosterSeq: integer(0),
    rosterHead: hex64,
    sig: base64,
  },
  {
    itemId: uuid,
    revision: integer(1),
    sha256: hex64,
    prevSha256: hex64,
    count: integer(0),
    setDigest: hex64,
    added: integer(1),
    ...auditClaim,
  },
);
