import { invalid } from "../errors";

// Whitespace or control characters anywhere inside make an address invalid (checked after trimming).
// eslint-disable-next-line no-control-regex
const FORBIDDEN_INSIDE = /[\s\u0000-\u001f\u007f-\u009f\u2028\u2029\u200b\ufeff]/u;
const SHAPE = /^[^@]+@[^@]+\.[^@.]+$/;

/** Trim, lower-case and check an email address; `400 INVALID` (field `email`) when it is not one. */
export function normalizeEmail(raw: string, field = "email"): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > 254 || FORBIDDEN_INSIDE.test(email) || !SHAPE.test(email) ||
      email.startsWith(".") || email.includes("..") || email.split("@")[1]!.startsWith(".")) {
    throw invalid("Not a valid email address", field);
  }
  return email;
}
