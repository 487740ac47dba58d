/**
 * Named refusals of the audit log: each constructor is the one place a refusal's code, message and field
 * are written, and each is thrown by one rule of this folder. Grep a name to find its rule and its
 * test; the error body keeps the contract's shape (`{ error: { code, message, field? } }`).
 */
import { invalid } from "../../errors";

// ---- Keys, statements and formats -----------------------------------------------------------

/** A link naming an audit head this organization's log does not have (`AuditClaim`). */
export const unknownAuditHead = (field: string) =>
  invalid("The link names an audit head this organization's audit log does not have", `${field}.auditHead`);
