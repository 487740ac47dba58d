/** `vaultctl keys` and `vaultctl trust`: fingerprints, trusting a key checked out of band, rotating one's own keys, key logs. */
import { table } from "../output";
import { emergencyLines } from "./emergency";
import { type Command, findUser, plural, recoveryLines, saveLogin, trustLine, statedLine } from "./shared";

export const keysCommands: Command[] = [
  {
    path: ["keys", "rotate"],
    args: [],
    summary:
      "Replace your RSA and Ed25519 keys: a signed step in your key log, every vault's key wrapped to the new keys, your other sessions ended",
    async run(ctx) {
      const client = await ctx.unlocked();
      const result = await client.keys.rotate();
      // The login goes on with the new keys (saved with it); a VAULT_SESSION holds the same stretched key and stays good.
      saveLogin(ctx, client);
      return {
        json: result,
        text: [
          `Keys rotated: key version ${result.keyVersion}, fingerprint`,
          `  ${result.fingerprint}`,
          `${plural(result.vaults, "vault")} wrapped to the new keys; ${plural(result.sessionsEnded, "other session")} ended: log in there again.`,
          "People who pinned your old keys follow your signed key log to these without a warning.",
          ...recoveryLines(result.recovery, "the old keys"),
          ...emergencyLines(result.emergency),
        ].join("\n"),
      };
    },
  },
  {
    path: ["keys", "log"],
    args: ["<user?>"],
    summary: "A user's key log (yours by default), verified: every key they had, each step signed by the key before it",
    async run(ctx, [userRef]) {
      const client = ctx.loggedIn();
      const userId = userRef ? (await findUser(client, userRef, { evenIfUntrusted: true })).userId : client.account.userId;
      const log = await client.keys.log(userId);
      return {
        json: log,
        text: table(
          ["VERSION", "FINGERPRINT", "SINCE"],
          log.map((e) => [String(e.version), e.fingerprint, e.at ?? "registration"]),
        ),
      };
    },
  },
  {
    path: ["keys"],
    args: ["<user?>"],
    summary: "A user's key fingerprint (yours by default), to compare out of band",
    async run(ctx, [userRef]) {
      const client = ctx.loggedIn();
      if (!userRef) {
        const fingerprint = await client.keys.own();
        return {
          json: { userId: client.account.userId, email: client.account.email, fingerprint, own: true },
          text: `${client.account.email} (you, user ${client.account.userId})\n  ${fingerprint}\n  your own keys: read this to the people you share with`,
        };
      }
      const user = await findUser(client, userRef, { evenIfUntrusted: true });
      const { current, pinned, trust } = await client.keys.fingerprint(user.userId);
      const status =
        pinned !== undefined && pinned !== current
          ? `CHANGED: pinned ${pinned}`
          : user.problem
            ? `NOT CHECKED OUT: ${user.problem.message}`
            : pinned === undefined
              ? "not pinned yet"
              : trustLine(user.email, trust);
      return {
        json: {
          userId: user.userId,
          email: user.email,
          fingerprint: current,
          pinned: pinned ?? null,
          trust: trust ?? null,
          stated: user.stated,
        },
        text: `${user.email} (user ${user.userId})\n  ${current}\n  ${status}${statedLine(user, "\n  ")}`,
      };
    },
  },
  {
    path: ["trust"],
    args: ["<user>", "<fingerprint>"],
    summary: "Accept a user's changed keys after checking the new fingerprint with them",
    async run(ctx, [userRef, fingerprint]) {
      const client = ctx.loggedIn();
      const user = await findUser(client, userRef!, { evenIfUntrusted: true });
      const normalized =
        fingerprint!
          .replace(/\s+/g, "")
          .toLowerCase()
          .match(/.{1,4}/g)
          ?.join(" ") ?? "";
      // The email checked is the one typed; given an id, the one the server lists, which the output names.
      const email = userRef!.includes("@") ? userRef! : user.email;
      await client.keys.trust(user.userId, normalized, email);
      return {
        json: { userId: user.userId, email, fingerprint: normalized },
        text: `Pinned ${email} (user ${user.userId}): ${normalized}`,
      };
    },
  },
];
