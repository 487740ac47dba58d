/** People leaving the organization: `org remove` (owners and admins) and `org leave`. */
import type { Removal, VaultClient } from "../../sdk";
import type { Context } from "../context";
import { progressBar } from "../output";
import { confirmOrStop } from "../password";
import { type Command, findUser, plural, YES_OPTION } from "./shared";

export const orgCommands: Command[] = [
  {
    path: ["org", "people"],
    args: [],
    summary: "Your organization's people, with each role as its signed log gives it and who signed it",
    options: {},
    async run(ctx) {
      const client = await ctx.unlocked();
      const [people, log] = await Promise.all([client.people.list(), client.people.log()]);
      const emailOf = new Map(people.map((p) => [p.userId, p.email]));
      const line = (p: (typeof people)[number]) => {
        const status =
          p.orgLog === "signed"
            ? `signed by ${emailOf.get(p.signedBy!) ?? p.signedBy}`
            : p.orgLog === "removed"
              ? `removed, signed by ${emailOf.get(p.signedBy!) ?? p.signedBy}`
              : p.orgLog === "unsigned"
                ? "not in the signed log: no role is taken from the server"
                : "the server's word";
        return `${p.email}  ${p.role}  ${status}${p.removedAt ? `  (removed ${p.removedAt})` : ""}`;
      };
      const head = log.signed
        ? `The organization's signed log is at link ${log.seq}.`
        : "The organization has no signed log yet: roles are the server's word until an owner's next session adopts one.";
      return { json: { log, people }, text: [head, ...people.map(line)].join("\n") };
    },
  },
  {
    path: ["org", "remove"],
    args: ["<user>"],
    summary: "Take a person out of your organization: their sessions end, every vault refuses them; then rekey the vaults you manage",
    options: { yes: YES_OPTION },
    async run(ctx, [ref], opts) {
      const client = await ctx.unlocked();
      const user = await findUser(client, ref!, { evenIfUntrusted: true });
      await confirmOrStop(`Take ${user.email} out of the organization, ending their sessions and their access to every vault?`, opts.yes);
      return finish(ctx, client, await client.people.remove(user.userId), `${user.email} is out of the organization`);
    },
  },
  {
    path: ["org", "leave"],
    args: [],
    summary: "Leave your organization: your sessions end here and everywhere, and every vault refuses you",
    options: { yes: YES_OPTION },
    async run(ctx, _args, opts) {
      const client = ctx.loggedIn();
      await confirmOrStop("Leave the organization? You lose every vault of it, on every device", opts.yes);
      const removal = await client.people.remove(client.account.userId);
      ctx.state.forgetLogin();
      const due = removal.vaults.filter((v) => v.needs === "rekey").length;
      return {
        json: removal,
        text: `You left the organization. ${plural(due, "shared vault")} you were in will be rekeyed by ${due === 1 ? "its" : "their"} owners.`,
      };
    },
  },
];

/** The removal's follow-up: each vault it left to rekey that this user manages, with a progress bar; the rest named for their owners. */
async function finish(ctx: Context, client: VaultClient, removal: Removal, headline: string) {
  const bar = progressBar(ctx.progress);
  const done = await client.people.finishRemoval(removal, { onProgress: (_vaultId, _i, _n, step) => bar(step) });
  bar.end();
  const lines = [
    `${headline}; ${plural(removal.sessionsEnded, "session")} ended.`,
    `${plural(done.rekeyed.length, "vault")} rekeyed (their remove link signed, a new key for the others).`,
    ...done.left.map((l) => `Left to the owners of vault ${l.vaultId}: ${l.reason}`),
  ];
  return { json: { ...removal, ...done }, text: lines.join("\n") };
}
