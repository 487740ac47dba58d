/** The exposure report after a removal: the secrets a removed member could read, a checklist that clears as they are changed. */
import { table } from "../output";
import { type Command, findUser, findVault, plural, shownName } from "./shared";

export const exposureCommands: Command[] = [
  {
    path: ["exposure"],
    args: ["<vault>", "<user>"],
    summary: "After a removal: the items (and kept revisions) the person could read, and which are changed since",
    async run(ctx, [vaultRef, userRef]) {
      const client = await ctx.unlocked();
      const vault = await findVault(client, vaultRef!);
      const user = await findUser(client, userRef!, { evenIfUntrusted: true });
      const report = await client.people.exposure(vault.vaultId, user.userId);
      if (report.memberships.length === 0)
        return { json: report, text: `${user.email} was never a member of ${shownName(vault)}, by its signed roster: nothing to change.` };
      const last = report.memberships.at(-1)!;
      const open = report.items.filter((i) => i.status === "exposed");
      const lines = [
        `${user.email} was a member of ${shownName(vault)} from ${last.from.at}${last.until ? ` to ${last.until.at}` : " and still is"}, ` +
          `holding key versions ${report.keyVersions!.from} to ${report.keyVersions!.to}.`,
        report.lastActivity
          ? `Their last recorded change in it: ${report.lastActivity} (reads are not recorded).`
          : "No change of theirs is recorded (reads are not recorded).",
        open.length === 0
          ? "Every secret they could read has been changed since."
          : `${plural(open.length, "secret")} to change (a change clears it):`,
        ...(report.items.length > 0
          ? [
              table(
                ["", "ITEM", "REVISIONS THEY COULD READ", "HOW KNOWN"],
                report.items.map((i) => [i.status === "changed" ? "[x]" : "[ ]", i.name, String(i.revisions + 1), i.basis]),
              ),
            ]
          : []),
        ...(report.trash.length > 0
          ? [
              `In the trash, readable by them before: ${report.trash.map((t) => t.name).join(", ")} (purge them, or change them if restored).`,
            ]
          : []),
      ];
      return { json: report, text: lines.join("\n") };
    },
  },
];
