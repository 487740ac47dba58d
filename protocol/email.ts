// Email addresses, normalized and refused alike by the server and every client.
// Design: docs/design/email-addresses.md
// Control (Cc), format (Cf), surrogate (Cs), private use (Co), unassigned (Cn); separators (Z*) and other white space.
const FORBIDDEN = /[\p{C}\p{Z}\s]/u;
const SHAPE = /^[^@]+@[^@]+\.[^@.]+$/;

/** Scripts a letter is told apart by; a letter of none of them counts as one more script. */
const SCRIPTS = [
  "Latin",
  "Greek",
  "Cyrillic",
  "Armenian",
  "Hebrew",
  "Arabic",
  "Devanagari",
  "Bengali",
  "Gurmukhi",
  "Gujarati",
  "Tamil",
  "Telugu",
  "Kannada",
  "Malayalam",
  "Thai",
  "Lao",
  "Georgian",
  "Hangul",
  "Hiragana",
  "Katakana",
  "Han",
  "Bopomofo",
  "Ethiopic",
  "Khmer",
  "Sinhala",
  "Myanmar",
  "Tibetan",
].map((name) => [name, new RegExp(`^\\p{Script=${name}}$`, "u")] as const);

/** Mixtures that one writing system uses (UTS #39, highly restrictive), besides a single script. */
const ALLOWED_MIXES = [
  new Set(["Latin", "Han", "Hiragana", "Katakana"]),
  new Set(["Latin", "Han", "Bopomofo"]),
  new Set(["Latin", "Han", "Hangul"]),
];

function scriptsOf(text: string): Set<string> {
  const scripts = new Set<string>();
  for (const ch of text) {
    if (!/\p{L}/u.test(ch)) continue; // digits, punctuation and marks belong to every script
    scripts.add(SCRIPTS.find(([, re]) => re.test(ch))?.[0] ?? "Other");
  }
  return scripts;
}

/** One script, or one of the mixtures a single writing system uses. */
export function isSingleScript(text: string): boolean {
  const scripts = scriptsOf(text);
  return scripts.size <= 1 || ALLOWED_MIXES.some((mix) => [...scripts].every((s) => mix.has(s)));
}

/** An address the rules refuse; the server answers it as `400 INVALID` (lib/domain/email.ts). */
export class EmailError extends Error {
  override readonly name = "EmailError";
}

/** Normalize and check an email address; `EmailError` when it is not one we accept. */
export function normalizeEmail(raw: string): string {
  const email = raw.normalize("NFKC").trim().toLowerCase();
  if (
    email.length === 0 ||
    email.length > 254 ||
    FORBIDDEN.test(email) ||
    !SHAPE.test(email) ||
    email.startsWith(".") ||
    email.includes("..") ||
    email.split("@")[1]!.startsWith(".")
  ) {
    throw new EmailError("Not a valid email address");
  }
  const [local, domain] = email.split("@") as [string, string];
  if (!isSingleScript(local) || !isSingleScript(domain)) throw new EmailError("An email address may not mix scripts (look-alike letters)");
  return email;
}
