/**
 * Email addresses as the server accepts them: the rules are `protocol/email.ts`, the same code every
 * client normalizes with, so an address compares, pins and signs alike on both sides.
 */
import { badEmail } from "./refusals";
import { EmailError, normalizeEmail as normalize } from "../../protocol/email";

/** Normalize and check an email address; `400 INVALID` (field `email`) when it is not one we accept. */
export function normalizeEmail(raw: string, field = "email"): string {
  try {
    return normalize(raw);
  } catch (err) {
    if (err instanceof EmailError) throw badEmail(err.message, field);
    throw err;
  }
}
