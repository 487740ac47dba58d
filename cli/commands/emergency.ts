/**
 * Emergency access (the SDK part: client.emergency; why and how: docs/design/emergency-access.md):
 * granting a member you verified your account after a wait you can stop, and the grantee's side of
 * it. Opening a released grant, as the grantor, is emergency-open.ts.
 */
import { ApiError, SecurityError, type VaultClient } from "../../sdk";
import type { EmergencyGrant, EmergencyRenewal } from "../../sdk/client";
import { NotFoundError, table } from "../output";
import { confirmOrStop } from "../password";
import { emergencyOpenCommands, grantOf, withTrustHint } from "./emergency-open";
import { type Command, YES_OPTION, findUser, notes, plural, usage } from "./shared";

const LEVELS = ["read", "takeover"] as const;
const MAX_WAIT_DAYS = 90;

/** What a level lets the grantee do, in a sentence. */
const WHAT: Record<EmergencyGrant["level"], string> = {
  read: "read your vaults",
  takeover: "take over your account (set a new master password for it)",
};

export const emergencyCommands: Command[] = [
  {
    path: ["emergency", "grant"],
    args: ["<member>"],
    summary: "Let a member whose keys you verified open your account after a wait you can stop (read, or take it over)",
    options: {
      level: { type: "string", value: "LEVEL", description: "read (your vaults, read only) or takeover (a new master password)" },
      wait: { type: "string", value: "DAYS", description: `the days they wait after asking, 1 to ${MAX_WAIT_DAYS}, while you can refuse` },
    },
    async run(ctx, [memberRef], opts) {
      const level = LEVELS.find((l) => l === opts.level) ?? usage(`--level is read or takeover${opts.level ? `, not ${opts.level}` : ""}`);
      const days = waitDays(opts.wait);
      const client = await ctx.unlocked();
      const user = await findUser(client, memberRef!);
      if (user.userId === client.account.userId) usage("you cannot grant emergency access to yourself");
      // A grant to that member already: made again under its id, with the new level and wait.
      const before = (await client.emergency.list()).granted.find((g) => g.granteeId === user.userId);
      const made = await client.emergency
        .grant(user.userId, { level, waitHours: days * 24 }, before?.grantId)
        .catch((err: unknown) => Promise.reject(withTrustHint(err, user.email, "grant again")));
      return {
        json: made,
        text: [
          `${before ? "Changed the grant" : "Granted"}: ${made.email} may ${WHAT[made.level]} ${waitText(made.waitHours)} after asking (grant ${made.grantId}).`,
          `They ask with \`vaultctl emergency request ${made.grantId}\`; you see it in \`vaultctl emergency list\` and stop it with \`vaultctl emergency refuse ${made.grantId}\`.`,
        ].join("\n"),
      };
    },
  },
  {
    path: ["emergency", "list"],
    args: [],
    summary: "The emergency access you grant and the access granted to you: level, wait, status, and when a waiting one opens",
    async run(ctx) {
      const { granted, received } = await ctx.loggedIn().emergency.list();
      return { json: { granted, received }, text: listText(granted, received) };
    },
  },
  {
    path: ["emergency", "revoke"],
    args: ["<grant>"],
    summary: "Take back emergency access you granted (a request waiting on it ends with it)",
    async run(ctx, [grantId]) {
      // No question asked: revoking is what a grantor does in a hurry, and a grant is made again with `grant`.
      const client = ctx.loggedIn();
      const grant = await grantOf(client, grantId!, "granted");
      await client.emergency.remove(grant.grantId);
      return {
        json: { revoked: grant.grantId },
        text: `Revoked grant ${grant.grantId}: ${grant.email} can no longer ask for access to your account.`,
      };
    },
  },
  {
    path: ["emergency", "decline"],
    args: ["<grant>"],
    summary: "Give up emergency access granted to you (only its grantor can grant it again)",
    options: { yes: YES_OPTION },
    async run(ctx, [grantId], opts) {
      const client = ctx.loggedIn();
      const grant = await grantOf(client, grantId!, "received");
      await confirmOrStop(`Decline ${grant.email}'s grant ${grant.grantId}? Only they can grant it again.`, opts.yes === true);
      await client.emergency.remove(grant.grantId);
      return { json: { declined: grant.grantId }, text: `Declined grant ${grant.grantId} from ${grant.email}.` };
    },
  },
  {
    path: ["emergency", "request"],
    args: ["<grant>"],
    summary: "Ask for emergency access granted to you: the wait starts, and its grantor may refuse meanwhile",
    async run(ctx, [grantId]) {
      const asked = await ctx.loggedIn().emergency.request(grantId!).catch(notFound(grantId!, "made to you"));
      return {
        json: asked,
        text: [
          `Asked ${asked.email} for ${asked.level} access to their account: it opens at ${asked.availableAt ?? "the end of the wait"} unless they refuse.`,
          `Then: vaultctl emergency ${asked.level === "takeover" ? "takeover" : "open"} ${asked.grantId}`,
        ].join("\n"),
      };
    },
  },
  {
    path: ["emergency", "refuse"],
    args: ["<grant>"],
    summary: "Refuse a request for emergency access you granted: nothing opens, the grant stays (idle) and they may ask again",
    async run(ctx, [grantId]) {
      const refused = await ctx.loggedIn().emergency.refuse(grantId!).catch(notFound(grantId!, "you made"));
      return {
        json: refused,
        text: `Refused ${refused.email}'s request: nothing opens, and a session it opened has ended. The grant stays (\`vaultctl emergency revoke ${refused.grantId}\` takes it back).`,
      };
    },
  },
  {
    path: ["emergency", "renew"],
    args: [],
    summary:
      "Make your stale grants again (after a password change or a key rotation), once you have seen them, to the grantees' keys as verified here",
    options: { yes: YES_OPTION },
    async run(ctx, _args, opts) {
      const client = await ctx.unlocked();
      const stale = (await client.emergency.list()).granted.filter((g) => g.status === "stale");
      if (stale.length === 0) return { json: { renewed: [], stale: [] }, text: "No grant of yours is stale: nothing to make again." };
      // What is made again is what this account signed, shown before it is: a grant revoked elsewhere is not brought back unseen.
      const shown = stale.map((g) => `  ${g.grantId}: ${g.email} may ${WHAT[g.level]} ${waitText(g.waitHours)} after asking`);
      await confirmOrStop(`Make these grants again?\n${shown.join("\n")}\n`, opts.yes === true);
      const result = await client.emergency.renew();
      return {
        json: result,
        text: [
          `Made ${plural(result.renewed.length, "grant")} again.`,
          ...result.stale.map(
            (id) =>
              `Still stale: ${id} (the grantee's keys changed and are not verified here: \`vaultctl keys <them>\`, \`vaultctl trust\`, then renew again).`,
          ),
        ].join("\n"),
      };
    },
  },
  ...emergencyOpenCommands,
];

/** `--wait DAYS`: a whole number of days from 1 to 90. */
function waitDays(raw: unknown): number {
  const days = typeof raw === "string" && /^[0-9]{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(days >= 1 && days <= MAX_WAIT_DAYS)) usage(`--wait takes the days to wait, a whole number from 1 to ${MAX_WAIT_DAYS}`);
  return days;
}

const waitText = (hours: number) => (hours % 24 === 0 ? plural(hours / 24, "day") : plural(hours, "hour"));

/** The server's 404 in vaultctl's words. */
const notFound = (grantId: string, which: string) => (err: unknown) => {
  if (err instanceof ApiError && err.status === 404)
    throw new NotFoundError(`no emergency access grant ${grantId} ${which} (\`vaultctl emergency list\` shows them)`);
  throw err;
};

/** Where a grant stands, as a table cell. */
function statusCell(g: EmergencyGrant): string {
  if (g.status === "waiting") return "waiting";
  if (g.status === "released") return g.openedAt ? "released, opened" : "released";
  return g.status;
}

function listText(granted: EmergencyGrant[], received: EmergencyGrant[]): string {
  const rows = (grants: EmergencyGrant[], mine: boolean) =>
    grants.map((g) => [
      g.grantId,
      g.email,
      g.level,
      waitText(g.waitHours),
      (mine && asked(g) ? "! " : "") + statusCell(g),
      g.status === "waiting" ? (g.availableAt ?? "") : g.status === "released" ? "now" : "",
    ]);
  return [
    "You grant:",
    table(["GRANT", "TO", "LEVEL", "WAIT", "STATUS", "OPENS"], rows(granted, true)),
    ...granted.filter(asked).map((g) => `! ${askedLine(g)}`),
    ...(granted.some((g) => g.status === "stale") ? ["Stale grants open nothing until made again: vaultctl emergency renew"] : []),
    "",
    "Granted to you:",
    table(["GRANT", "FROM", "LEVEL", "WAIT", "STATUS", "OPENS"], rows(received, false)),
  ].join("\n");
}

const asked = (g: EmergencyGrant) => g.status === "waiting" || g.status === "released";

/** A request on a grant you made, and how to stop it. */
function askedLine(g: EmergencyGrant): string {
  const when = g.status === "waiting" ? `it opens at ${g.availableAt}` : "the wait is over: it opens now";
  return `${g.email} asked for ${g.level} access to your account: ${when}. If you did not expect it: vaultctl emergency refuse ${g.grantId}`;
}

/**
 * Said on standard error at login and unlock: a request waiting (or released) on a grant you made.
 * Best effort: a listing that fails is `emergency list`'s to report, not the login's.
 */
export async function emergencyNotice(client: VaultClient): Promise<void> {
  if (!notes.enabled) return;
  try {
    const { granted } = await client.emergency.list();
    for (const g of granted.filter(asked)) process.stderr.write(`Emergency access: ${askedLine(g)}\n`);
  } catch (err) {
    if (err instanceof SecurityError)
      process.stderr.write(`Emergency access: your grants fail their checks (${err.message}): see vaultctl emergency list\n`);
  }
}

/** What became of your emergency access grants after a change they were bound to (a password change, a key rotation). */
export function emergencyLines(renewal: EmergencyRenewal): string[] {
  return [
    ...(renewal.renewed.length > 0 ? [`${plural(renewal.renewed.length, "emergency access grant")} made again to the same people.`] : []),
    ...(renewal.stale.length > 0
      ? [
          `${plural(renewal.stale.length, "emergency access grant")} STALE: ${renewal.stale.length === 1 ? "it opens" : "they open"} nothing until made again (\`vaultctl emergency renew\` shows them first).`,
        ]
      : []),
  ];
}
