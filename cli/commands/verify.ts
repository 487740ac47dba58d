/** `vaultctl verify` (a vault against its signed roster and item log, or a saved roster offline) and `vaultctl roster`. */
import fs from "node:fs";
import { describeLink, type CheckedMember, type PublicKeyBundle } from "../../sdk";
import { readSavedRoster, verifySavedRoster, type SavedRoster } from "../roster";
import { sameFingerprint } from "../../sdk/fingerprints";
import type { Context } from "../context";
import { EXIT, table, type Output } from "../output";
import { type Command, plural, findVault, shownName } from "./shared";

export const verifyCommands: Command[] = [
  {
    path: ["verify"],
    args: ["<vault-or-file>"],
    summary:
      "Check a vault: its signed roster, every member's wrap and its items against the signed item log; or, given a file from `roster --save`, that roster offline",
    options: {
      compare: {
        type: "string",
        value: "FINGERPRINT",
        description: "the vault's fingerprint as another member reads it to you: the same means you both see one history",
      },
    },
    async run(ctx, [vaultRef], opts) {
      if (fs.existsSync(vaultRef!)) return verifyOffline(ctx, vaultRef!);
      const client = await ctx.unlocked();
      const report = await client.vaults.verify((await findVault(client, vaultRef!, { toVerify: true })).vaultId);
      const compared =
        opts.compare === undefined ? undefined : report.fingerprint !== null && sameFingerprint(report.fingerprint, opts.compare as string);
      if (compared === false)
        report.problems.push(
          `the fingerprint you were given (${opts.compare as string}) is not this vault's (${report.fingerprint}): one of you is shown another history`,
        );
      const lines = [
        `Vault "${report.vaultName}" (${report.vaultType}, key version ${report.keyVersion}): ${report.ok ? "OK" : "PROBLEMS FOUND"}`,
      ];
      for (const m of report.members) {
        const who = `${m.email ?? m.userId} (${m.role})`;
        lines.push(m.ok ? `  ok    ${who}, wrapped by ${nameOf(report, m.senderId)}` : `  FAIL  ${who}: ${m.problems.join("; ")}`);
      }
      if (report.roster)
        lines.push(`  ok    signed roster: ${report.roster.seq + 1} links verified, head ${report.roster.head.slice(0, 16)}…`);
      if (report.items)
        lines.push(
          `  ok    signed item log: ${plural(report.items.count, "item")} as its link ${report.items.seq} leaves them, head ${report.items.head.slice(0, 16)}…`,
        );
      if (report.fingerprint)
        lines.push(
          `        fingerprint ${report.fingerprint}${compared ? " (the same as the one you were given)" : ": compare it with another member by phone"}`,
        );
      for (const p of report.problems) lines.push(`  FAIL  ${p}`);
      for (const w of report.warnings) lines.push(`  note  ${w}`);
      const ok = report.ok && compared !== false;
      return {
        json: { ...report, ok, ...(compared !== undefined && { compared }) },
        text: lines.join("\n"),
        exitCode: ok ? EXIT.ok : EXIT.security,
      };
    },
  },

  {
    path: ["roster"],
    args: ["<vault>"],
    summary: "A vault's signed roster, verified: who changed its membership and key, when",
    options: {
      save: {
        type: "string",
        value: "FILE",
        description: "also save it with the signers' public keys, for `vaultctl verify FILE` offline",
      },
    },
    async run(ctx, [vaultRef], opts) {
      const client = ctx.loggedIn();
      const vault = await findVault(client, vaultRef!);
      const roster = await client.members.roster(vault.vaultId);
      if (!roster) {
        return {
          json: { vaultId: vault.vaultId, signed: false, links: [] },
          text: `Vault ${shownName(vault)} has no signed roster: its member list is the server's word. An owner can adopt it: vaultctl vault adopt ${vault.vaultId}`,
        };
      }
      const org = await client.people.list();
      // Emails only of people whose keys and identity check out; anyone else by id.
      const emails = new Map(org.filter((m) => !m.problem).map((m) => [m.userId, m.email]));
      const name = (id: string) => emails.get(id) ?? id;
      if (opts.save) {
        const saved: SavedRoster = {
          format: "vault-roster/v1",
          server: ctx.server,
          vaultId: vault.vaultId,
          vaultName: vault.nameCheck.name,
          links: roster.links,
          keys: signersKeys(roster.links, org),
        };
        fs.writeFileSync(opts.save, JSON.stringify(saved, null, 2) + "\n", { mode: 0o600 });
      }
      const { state } = roster;
      return {
        json: {
          vaultId: vault.vaultId,
          signed: true,
          seq: state.seq,
          head: state.head,
          keyVersion: state.keyVersion,
          rekeyRequired: state.rekeyRequired,
          members: [...state.members].map(([userId, m]) => ({ userId, email: emails.get(userId), role: m.role, key: m.key })),
          links: roster.links,
        },
        text: [
          `Signed roster of ${shownName(vault)}: ${roster.links.length} links, all verified; head ${state.head.slice(0, 16)}… (seq ${state.seq}), key version ${state.keyVersion}`,
          table(
            ["SEQ", "AT", "BY", "CHANGE"],
            roster.links.map((l) => [String(l.seq), l.at, name(l.actorId), describeLink(l, name)]),
          ),
          `Members: ${[...state.members].map(([id, m]) => `${name(id)} (${m.role})`).join(", ")}${state.rekeyRequired ? "\nRekey required: a member was removed since the last rekey." : ""}`,
          ...(opts.save ? [`Saved to ${opts.save}.`] : []),
        ].join("\n"),
      };
    },
  },
];

/** The public keys of every user the links name, as the organization's members show them (none of a member whose keys do not check out). */
function signersKeys(links: SavedRoster["links"], org: CheckedMember[]): Record<string, PublicKeyBundle> {
  const ids = new Set(links.flatMap((l) => [l.actorId, ...(l.subjectId ? [l.subjectId] : []), ...(l.members ?? []).map((m) => m.userId)]));
  const keys: Record<string, PublicKeyBundle> = {};
  for (const id of ids) {
    const bundle = org.find((m) => m.userId === id && !m.problem);
    if (bundle)
      keys[id] = {
        userId: id,
        email: bundle.email,
        publicKey: bundle.publicKey,
        signingPublicKey: bundle.signingPublicKey,
        publicKeySignature: bundle.publicKeySignature,
      };
  }
  return keys;
}

function nameOf(report: { members: Array<{ userId: string; email?: string }> }, userId: string): string {
  return report.members.find((m) => m.userId === userId)?.email ?? userId;
}

/** `vaultctl verify FILE`: a saved roster checked with no server, against this machine's pins and seen heads. */
async function verifyOffline(ctx: Context, file: string): Promise<Output> {
  const saved = readSavedRoster(file);
  const state = await verifySavedRoster(saved, ctx.state.pins(saved.server), ctx.state.rosterHeads(saved.server));
  const name = (id: string) => saved.keys[id]?.email ?? id;
  const members = state ? [...state.members].map(([userId, m]) => ({ userId, email: saved.keys[userId]?.email, role: m.role })) : [];
  return {
    json: { ok: true, vaultId: saved.vaultId, name: state?.name ?? null, seq: state?.seq ?? null, head: state?.head ?? null, members },
    // The name the roster signs, not the one the file was saved with (the server's word then).
    text: state
      ? `Saved roster of ${state.name === undefined ? `vault ${saved.vaultId} (no name signed)` : `"${state.name}"`}: OK, ${saved.links.length} links verified offline; members ${members.map((m) => `${name(m.userId)} (${m.role})`).join(", ")}`
      : `Saved roster of vault ${saved.vaultId} is empty.`,
  };
}
