/**
 * The master-password rule every client applies before registering: at least 12 characters, and a
 * strength of at least 3 of 4 by zxcvbn (its maintained TypeScript port, @zxcvbn-ts), with the
 * email's words counted as known to an attacker. The password never reaches the server (only a
 * hash derived from it does), so only the client can refuse a weak one.
 *
 * zxcvbn's dictionaries are a few hundred KB: they load on first use, so the web vault's first
 * page does not carry them.
 */
export const MIN_MASTER_PASSWORD_LENGTH = 12;
/** zxcvbn's score: 0 (guessable in a few tries) to 4 (very unguessable). */
export const MIN_MASTER_PASSWORD_SCORE = 3;

export interface PasswordVerdict {
  ok: boolean;
  score: number;
  /** Why it is refused, as sentences; empty when it is not. */
  reasons: string[];
  /** zxcvbn's advice. */
  suggestions: string[];
}

type Check = (password: string, userInputs: string[]) => { score: number; warning: string | null; suggestions: string[] };
let loading: Promise<Check> | undefined;

async function loadCheck(): Promise<Check> {
  const [{ ZxcvbnFactory }, common, en] = await Promise.all([
    import("@zxcvbn-ts/core"),
    import("@zxcvbn-ts/language-common"),
    import("@zxcvbn-ts/language-en"),
  ]);
  const zxcvbn = new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  });
  return (password, userInputs) => {
    const result = zxcvbn.check(password, userInputs);
    return { score: result.score, warning: result.feedback.warning, suggestions: result.feedback.suggestions };
  };
}

/** Words of an email an attacker would try first: `ada.lovelace@acme.example` -> ada, lovelace, acme. */
export function emailWords(email: string): string[] {
  return email
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3 && w !== "com" && w !== "org");
}

export async function checkMasterPassword(password: string, userInputs: string[] = []): Promise<PasswordVerdict> {
  const normalized = password.normalize("NFKC");
  const reasons: string[] = [];
  const length = [...normalized].length;
  if (length < MIN_MASTER_PASSWORD_LENGTH)
    reasons.push(`It has ${length} characters; a master password needs at least ${MIN_MASTER_PASSWORD_LENGTH}.`);
  const check = await (loading ??= loadCheck());
  const { score, warning, suggestions } = check(normalized, userInputs);
  if (score < MIN_MASTER_PASSWORD_SCORE) {
    reasons.push(
      `${warning ? `${warning.replace(/\.?$/, ".")} ` : ""}It is too easy to guess (strength ${score} of 4; at least ${MIN_MASTER_PASSWORD_SCORE} needed).`,
    );
  }
  return { ok: reasons.length === 0, score, reasons, suggestions };
}
