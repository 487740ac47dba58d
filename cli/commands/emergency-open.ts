/**
 * Opening emergency access granted to you, once its wait is over: as the grantor, in a client of
 * its own that keeps everything in memory. Nothing of the grantor's account (its tokens, its keys,
 * the pins made as it) is written to this machine's state, which stays yours.
 */
import { ApiError, SecurityError, VaultClient, WeakPasswordError, type Item } from "../../sdk";
import type { EmergencyGrant } from "../../sdk/client";
import { checkMasterPassword, emailWords } from "../../sdk/password-strength";
import { NotFoundError, table, type Output } from "../output";
import { confirmOrStop, readNewPassword } from "../password";
import { type Command, YES_OPTION, notes, plural, shownName, usage } from "./shared";

export const emergencyOpenCommands: Command[] = [
  {
    path: ["emergency", "open"],
    args: ["<grant>"],
    summary: "Once the wait is over, read the vaults of an account that granted you read access: names and usernames",
    options: { "show-passwords": { type: "boolean", description: "print the items' passwords too" } },
    async run(ctx, [grantId], opts) {
      const client = await ctx.unlocked();
      const grant = await grantOf(client, grantId!, "received");
      if (grant.level === "takeover")
        usage(`grant ${grant.grantId} lets you take over ${grant.email}'s account: vaultctl emergency takeover ${grant.grantId}`);
      const asGrantor = await takeUp(client, grant);
      return readOut(asGrantor, grant, opts["show-passwords"] === true);
    },
  },
  {
    path: ["emergency", "takeover"],
    args: ["<grant>"],
    summary: "Once the wait is over, set a new master password for an account that granted you takeover: every other session of it ends",
    options: {
      "new-password-file": { type: "string", value: "FILE", description: "read the account's new password from the first line of FILE" },
      "new-password-env": {
        type: "string",
        value: "NAME",
        description: "read the account's new password from the environment variable NAME",
      },
      yes: YES_OPTION,
    },
    async run(ctx, [grantId], opts) {
      const client = await ctx.unlocked();
      const grant = await grantOf(client, grantId!, "received");
      if (grant.level !== "takeover") usage(`grant ${grant.grantId} gives read access only: vaultctl emergency open ${grant.grantId}`);
      const next = await newPassword(grant, opts);
      await confirmOrStop(
        `Set a new master password for ${grant.email}? Every session of their account ends, their second factors are removed, and the old password stops opening it.`,
        opts.yes === true,
      );
      const asGrantor = await takeUp(client, grant);
      const result = await asGrantor.completeTakeover(next);
      // This session was only the means: the account is theirs to sign in to with the new password, wherever.
      await asGrantor.logout().catch(() => undefined);
      return {
        json: { grantId: grant.grantId, userId: grant.grantorId, email: grant.email, ...result },
        text: [
          `${grant.email} now has the new master password: sign in to it with that password (the web vault, or \`vaultctl login ${grant.email}\` with another VAULTCTL_HOME: this one stays yours).`,
          `Every other session of the account ended (${plural(result.sessionsEnded, "session")}); its second factors were removed.`,
        ].join("\n"),
      };
    },
  },
];

/** A grant by id on one side, as listed and checked; not found says which side it looked on. */
export async function grantOf(client: VaultClient, grantId: string, side: "granted" | "received"): Promise<EmergencyGrant> {
  const listed = await client.emergency.list();
  const found = listed[side].find((g) => g.grantId === grantId.toLowerCase());
  if (found) return found;
  const other = side === "granted" ? "received" : "granted";
  const hint = listed[other].some((g) => g.grantId === grantId.toLowerCase())
    ? side === "granted"
      ? `: it was made to you (\`vaultctl emergency decline ${grantId}\` gives it up)`
      : `: you made it (\`vaultctl emergency revoke ${grantId}\` takes it back)`
    : " (`vaultctl emergency list` shows them)";
  throw new NotFoundError(`no emergency access grant ${grantId} ${side === "granted" ? "you made" : "made to you"}${hint}`);
}

/** The grant opened (the server's 409 before the wait is over, said with when it opens) and taken up as the grantor in memory. */
async function takeUp(client: VaultClient, grant: EmergencyGrant): Promise<VaultClient> {
  const release = await client.emergency.open(grant.grantId).catch((err: unknown) => {
    if (!(err instanceof ApiError)) throw withTrustHint(err, grant.email, "try again");
    if (err.status === 409)
      throw new ApiError(
        409,
        err.code,
        grant.status === "waiting"
          ? `grant ${grant.grantId} opens at ${grant.availableAt}, unless ${grant.email} refuses first`
          : `grant ${grant.grantId} is ${grant.status}: ${grant.status === "idle" ? `ask first (vaultctl emergency request ${grant.grantId})` : err.message}`,
      );
    throw err;
  });
  const asGrantor = new VaultClient({ baseUrl: client.http.baseUrl });
  await asGrantor.takeUpEmergency(release);
  return asGrantor;
}

/** The grantor's vaults and items: names and usernames, passwords when asked for. */
async function readOut(asGrantor: VaultClient, grant: EmergencyGrant, showPasswords: boolean): Promise<Output> {
  const view = (i: Item) => ({
    itemId: i.itemId,
    name: i.name,
    type: i.type,
    username: i.fields.username ?? null,
    ...(showPasswords && { password: i.fields.password ?? null }),
  });
  const vaults = [];
  const lines = [`${grant.email}'s vaults, read as them (read only):`];
  for (const v of await asGrantor.vaults.listChecked()) {
    let items: Item[];
    try {
      items = await asGrantor.items.list(v.vaultId);
    } catch (err) {
      // One vault that does not open hides none of the others.
      lines.push("", `Vault ${shownName(v)} (${v.vaultId}): not opened: ${(err as Error).message}`);
      continue;
    }
    vaults.push({ vaultId: v.vaultId, name: v.nameCheck.name, items: items.map(view) });
    const headers = ["ID", "NAME", "USERNAME", ...(showPasswords ? ["PASSWORD"] : [])];
    const rows = items.map((i) => [i.itemId, i.name, i.fields.username ?? "", ...(showPasswords ? [i.fields.password ?? ""] : [])]);
    lines.push("", `Vault ${shownName(v)} (${v.vaultId}):`, table(headers, rows));
  }
  if (!showPasswords && notes.enabled) process.stderr.write("Passwords are not shown: --show-passwords prints them.\n");
  return { json: { grantId: grant.grantId, grantor: { userId: grant.grantorId, email: grant.email }, vaults }, text: lines.join("\n") };
}

/** The account's new password, checked for strength before the grant is opened; typed twice on a terminal. */
async function newPassword(grant: EmergencyGrant, opts: Record<string, unknown>): Promise<string> {
  const file = opts["new-password-file"] as string | undefined;
  const env = opts["new-password-env"] as string | undefined;
  if (file === undefined && env === undefined && !process.stdin.isTTY)
    usage("standard input is not a terminal: give the account's new password with --new-password-file or --new-password-env");
  const next = await readNewPassword({ file, env }, `New master password for ${grant.email}: `);
  const verdict = await checkMasterPassword(next, emailWords(grant.email));
  if (!verdict.ok) throw new WeakPasswordError(verdict.reasons, verdict.suggestions);
  return next;
}

/** A person's keys this machine has not verified (`EMERGENCY_GRANTEE_UNVERIFIED`, `EMERGENCY_GRANTOR_UNVERIFIED`): the commands that verify them. */
export function withTrustHint(err: unknown, email: string, then: string): unknown {
  if (!(err instanceof SecurityError && /^EMERGENCY_GRANT(EE|OR)_UNVERIFIED$/.test(err.code))) return err;
  return new SecurityError(
    err.code,
    `${email}'s keys are known on this machine only as the server showed them: compare fingerprints with them first ` +
      `(\`vaultctl keys ${email}\` here, \`vaultctl keys\` on theirs), then \`vaultctl trust ${email} <fingerprint>\`, and ${then}`,
    err.userId,
  );
}
