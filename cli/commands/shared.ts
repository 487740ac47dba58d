/** What the command groups share: the command and option types, the common options, and how a user, vault or item is found and named. */
import {
  ApiError,
  GRANTABLE_ROLES,
  SecurityError,
  type GrantableRole,
  type CheckedInvite,
  type CheckedVault,
  type TrustLevel,
  type VaultClient,
  type RecoveryRenewal,
  VaultListChanged,
} from "../../sdk";
import type { Context } from "../context";
import { NotFoundError, UsageError, type Output } from "../output";
import { didYouMean } from "../suggest";

export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  /** Shown in help as `--name VALUE`. */
  value?: string;
  /** A one-letter name it also answers to (`-o`). */
  short?: string;
  description: string;
}

export interface Command {
  path: string[];
  /** Positional arguments, e.g. `<vault> <name>`; a trailing `?` marks an optional one. */
  args: string[];
  summary: string;
  options?: Record<string, OptionSpec>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command reads the options its own spec declares
  run(ctx: Context, args: string[], opts: Record<string, any>): Promise<Output>;
}

export const ROLE_OPTION: OptionSpec = { type: "string", value: "ROLE", description: "member (default) or admin" };
/** Destructive commands ask first on a terminal; scripts say --yes. */
export const YES_OPTION: OptionSpec = {
  type: "boolean",
  description: "do it without asking (needed when standard input is not a terminal)",
};

export const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

export function usage(message: string): never {
  throw new UsageError(message);
}

export function pick<T extends object, K extends keyof T>(obj: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, obj[k]])) as Pick<T, K>;
}

export function parseRole(role: string | undefined): GrantableRole {
  if (role === undefined) return "member";
  const granted = GRANTABLE_ROLES.find((r) => r === role);
  return granted ?? usage(`--role must be ${GRANTABLE_ROLES.join(" or ")}, not ${role}`);
}

/**
 * A user of your organization by email or id; not found names the closest email. A user whose
 * keys or identity fail the checks is refused, except where the command is about checking them
 * (`evenIfUntrusted`: `keys`, `trust`).
 */
export async function findUser(
  client: VaultClient,
  ref: string,
  opts: { evenIfUntrusted?: boolean } = {},
): Promise<{ userId: string; email: string; stated: boolean; problem?: Error }> {
  try {
    return opts.evenIfUntrusted ? await client.people.findMember(ref) : await client.people.find(ref);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err;
    const emails = (await client.people.list()).map((m) => m.email);
    throw new NotFoundError(`no user ${ref} in your organization${didYouMean(ref.trim().toLowerCase(), emails)}`);
  }
}

/**
 * A vault by id, or by its exact name when that is unique among the caller's vaults; a name counts
 * only where the vault's signed roster vouches for it, so the server cannot point a name at another
 * vault (and a vault it misnames is refused).
 */
export async function findVault(client: VaultClient, ref: string, opts: { toVerify?: boolean } = {}): Promise<CheckedVault> {
  let vaults: CheckedVault[];
  try {
    vaults = await client.vaults.listChecked();
  } catch (err) {
    // A vault asked for by id does not rest on the listing being complete, nor on a name.
    const byId = err instanceof VaultListChanged && err.listed.find((v) => v.vaultId === ref.toLowerCase());
    if (byId) return byId;
    throw withForgetHint(err);
  }
  const byId = vaults.find((v) => v.vaultId === ref.toLowerCase());
  if (byId) return byId;
  const found = byName(vaults, ref, opts);
  await sayWhoNamed(client, found);
  return found;
}

/** The vaults, checked, and held against what this machine knows (a vault left out, a name moved: refused with how to confirm). */
export async function listChecked(client: VaultClient): Promise<CheckedVault[]> {
  try {
    return await client.vaults.listChecked();
  } catch (err) {
    throw withForgetHint(err);
  }
}

/** A refused listing, with the command that confirms the vaults it left out are gone. */
function withForgetHint(err: unknown): unknown {
  if (!(err instanceof VaultListChanged)) return err;
  const ids = err.missing.map((m) => m.vaultId).join(" ");
  return new SecurityError(
    err.code,
    `${err.message}. If you know it is gone (deleted, or you were removed from it): vaultctl vault forget ${ids}`,
  );
}

/** Notes on standard error beside a command's output (none with `--json`, whose standard error is one JSON error or nothing). */
export const notes = { enabled: true };

/**
 * Who signed the name a vault was found by, and who owns it, said on standard error when it is not
 * the caller: a colleague's vault under the name of one of yours shows whose it is (`vault list
 * --json` gives both as `namedBy` and `owners`).
 */
async function sayWhoNamed(client: VaultClient, vault: CheckedVault): Promise<void> {
  const me = client.account.userId;
  if (!notes.enabled || !vault.namedBy || vault.namedBy === me) return;
  const emails = new Map((await client.people.list()).map((m) => [m.userId, m.email]));
  const who = (id: string) => (id === me ? "you" : (emails.get(id) ?? id));
  process.stderr.write(
    `Vault "${vault.nameCheck.name}" (${vault.vaultId}): named by ${who(vault.namedBy)}, owned by ${(vault.owners ?? []).map(who).join(", ") || "nobody the roster names"}.\n`,
  );
}

function byName(vaults: CheckedVault[], ref: string, opts: { toVerify?: boolean }): CheckedVault {
  // `verify` reports what is wrong with a vault: found by the name the server shows, if that is unique.
  const shown = vaults.filter((v) => v.vaultName === ref);
  if (opts.toVerify && shown.length === 1) return shown[0]!;
  const byName = vaults.filter((v) => v.nameCheck.status !== "unverified" && v.nameCheck.name === ref);
  if (byName.length === 1) {
    const check = byName[0]!.nameCheck;
    if (check.status === "mismatch")
      throw new SecurityError(
        "NAME_MISMATCH",
        `the server calls the vault whose signed roster names it "${ref}" "${check.shown}": refusing to use it by name`,
      );
    return byName[0]!;
  }
  if (byName.length > 1) usage(`${byName.length} vaults are named "${ref}": use an id (${byName.map((v) => v.vaultId).join(", ")})`);
  const misnamed = vaults.find((v) => v.nameCheck.status === "mismatch" && v.nameCheck.shown === ref);
  if (misnamed)
    throw new SecurityError(
      "NAME_MISMATCH",
      `the server calls vault ${misnamed.vaultId} "${ref}", but its signed roster names it "${misnamed.nameCheck.name}": refusing to use it by that name`,
    );
  const unvouched = vaults.filter((v) => v.nameCheck.status === "unverified" && v.vaultName === ref);
  // A vault of that name whose roster failed its checks: that failure is the answer.
  const failed = unvouched.find((v) => v.problem);
  if (failed) throw failed.problem;
  if (unvouched.length > 0)
    usage(
      `no signed roster vouches for the name "${ref}" (${unvouched.map((v) => v.vaultId).join(", ")}): use the vault's id, or have an owner or admin confirm the name (vaultctl vault rename <id> "${ref}")`,
    );
  throw new NotFoundError(
    `no vault "${ref}" among yours${didYouMean(
      ref,
      vaults.map((v) => v.nameCheck.name),
    )} (\`vaultctl vault list\` shows them)`,
  );
}

/**
 * A vault's name as vaultctl shows it: the vouched one (in quotes within a sentence), marked when
 * nothing vouches for it or the server says otherwise.
 */
export function shownName(v: CheckedVault, inSentence = true): string {
  const check = v.nameCheck;
  const name = inSentence ? `"${check.name}"` : check.name;
  if (check.status === "verified") return name;
  if (check.status === "unverified") return `${name} (?)`;
  return `${name} (!) the server says "${check.shown}"`;
}

/** What vouches for a user's keys on this machine. */
export function trustLine(email: string, trust: TrustLevel | undefined): string {
  if (trust === "invite") return `vouched for by the invite you sent ${email}: nothing to compare`;
  if (trust === "checked") return "you checked it with them and trusted it";
  if (trust === "first-use")
    return `pinned when first seen: compare it with theirs (\`vaultctl keys\` on their machine) over another channel`;
  return "not pinned yet";
}

/** Said of a user who has not signed their id, email and keys (an account not used since statements came). */
export function statedLine(user: { email: string; stated: boolean }, before = "\n"): string {
  return user.stated
    ? ""
    : `${before}${user.email} has not signed their email and keys yet (an account not used since this check came): the email is the server's word`;
}

export function inviteTrustLine(invite: CheckedInvite): string {
  return invite.verified
    ? `Checked: signed by ${invite.inviter.email}, whose key fingerprint your link names (${invite.inviterFingerprint}).`
    : "Not checked: this is a bare token, not a link from an invite with its inviter's key fingerprint; ask for the whole link to be sure.";
}

/** Keeps the login as the client holds it now (after a login, a password change, a key rotation). */
export function saveLogin(ctx: Context, client: VaultClient): void {
  ctx.state.saveLogin({ server: client.http.baseUrl, account: client.account, tokens: client.http.currentTokens! });
}

/** What became of the account's recovery enrolment after a change it was bound to (`held`: what the old one held). */
export function recoveryLines(renewal: RecoveryRenewal, held: string): string[] {
  if (renewal === "renewed") return [`Account recovery made again to the same trustees (the old one held ${held}).`];
  if (renewal === "stale")
    return [
      `Account recovery is STALE (it held ${held}) and could not be made again here: run \`vaultctl recovery enrol\` with trustees you verified.`,
    ];
  return [];
}
