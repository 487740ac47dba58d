/** `vaultctl audit verify` and `vaultctl audit export`: the audit log checked here. */
import fs from "node:fs";
import { auditKeyFingerprint, verifyAuditExport, type AuditExport } from "../../protocol/formats/audit";
import { AUDIT_KEY_PIN } from "../../sdk/client/audit";
import { type Command, plural, usage } from "./shared";

export const auditCommands: Command[] = [
  {
    path: ["audit", "verify"],
    args: ["<file?>"],
    summary: "Check the organization's audit log here (or, given a file from `audit export`, offline) against the pinned audit key",
    options: {
      key: {
        type: "string",
        value: "KEY",
        description: "the audit key (base64) to check a file with, instead of the one pinned for the server",
      },
    },
    async run(ctx, [file], opts) {
      if (file) {
        const pinned = await ctx.state.pins(ctx.server).get(AUDIT_KEY_PIN);
        const key = (opts.key as string | undefined) ?? (typeof pinned === "string" ? pinned : pinned?.fingerprint);
        if (!key) usage(`no audit key is pinned for ${ctx.server}: give the one you trust with --key (the server's: GET /audit/key)`);
        const chain = await verifyAuditExport(JSON.parse(fs.readFileSync(file, "utf8")) as AuditExport, key);
        return {
          json: { ok: true, count: chain.count, head: chain.head, auditKey: await auditKeyFingerprint(key) },
          text: `Audit log in ${file}: OK, checked offline: ${plural(chain.count, "record")}, each hash recomputed and linked to the one before; head ${chain.head.slice(0, 16)}… signed by audit key ${(await auditKeyFingerprint(key)).slice(0, 16)}…`,
        };
      }
      const client = ctx.loggedIn();
      const checked = await client.audit.verify();
      return {
        json: {
          ok: true,
          count: checked.count,
          seq: checked.seq,
          head: checked.head,
          checkedNow: checked.checkedNow,
          auditKey: checked.auditKeyFingerprint,
          fingerprint: checked.fingerprint,
        },
        text: [
          `Audit log: OK, checked here: ${plural(checked.count, "record")}${checked.seenBefore ? ` (${checked.checkedNow} new since record ${checked.seenBefore.seq}, which this machine saw and which is unchanged)` : ""}, each hash recomputed and linked to the one before, none missing.`,
          `Head ${checked.head.slice(0, 16)}… (record ${checked.seq}), signed by the server's audit key ${checked.auditKeyFingerprint.slice(0, 16)}…; fingerprint ${checked.fingerprint} (compare it with another admin by phone).`,
          "What each record says happened is the server's word; that none was dropped, reordered or changed since this machine saw it is checked.",
        ].join("\n"),
      };
    },
  },
  {
    path: ["audit", "export"],
    args: ["<file>"],
    summary:
      "Save the organization's audit log, checked, with a checkpoint signed by the server's audit key (for `audit verify FILE` anywhere)",
    async run(ctx, [file]) {
      const exported = await ctx.loggedIn().audit.export();
      fs.writeFileSync(file!, JSON.stringify(exported, null, 2) + "\n");
      return {
        json: { file, count: exported.records.length, head: exported.checkpoint.head },
        text: `Saved ${plural(exported.records.length, "audit record")} to ${file} (head ${exported.checkpoint.head.slice(0, 16)}…, signed by the audit key ${(await auditKeyFingerprint(exported.auditKey)).slice(0, 16)}…).`,
      };
    },
  },
];
