/**
 * Second factors, the organization's policies, and k-of-n account recovery: `factors`,
 * `policies`, `recovery` (enrol, approve as a trustee) and `recover` (from a new device).
 * WebAuthn needs a browser: security keys and passkeys are enrolled in the web vault; here they are
 * listed and removed (`factors`, `passkeys`), and an account that has only those signs in with a
 * recovery code.
 */
import type { LockOutPolicy, PasskeySignInPolicy, PendingRecovery, SecondFactorPrompt, VaultClient } from "../../sdk";
import { askLine, readPassword } from "../password";
import { table, UsageError } from "../output";
import { type Command, findUser, plural, saveLogin, usage } from "./shared";

/** The second step of `login`: the code given as an option, else asked on the terminal. */
export function secondFactorPrompt(totp: string | undefined, recoveryCode: string | undefined): SecondFactorPrompt {
  return async (c) => {
    if (!c.retry && totp) return { totpCode: totp };
    if (!c.retry && recoveryCode) return { recoveryCode };
    if (c.retry && (totp || recoveryCode)) usage("that code was not right (or was used already): run login again with another");
    const how = c.methods.includes("totp")
      ? "Code from your authenticator app (or a recovery code): "
      : "A recovery code (security keys work in the web vault): ";
    const answer = await askLine(how, "--totp or --recovery-code");
    return /^\d{6}$/.test(answer) ? { totpCode: answer } : { recoveryCode: answer };
  };
}

export const securityCommands: Command[] = [
  {
    path: ["factors"],
    args: [],
    summary: "Your second factors, the recovery codes left, and whether your organization requires one",
    async run(ctx) {
      const list = await ctx.loggedIn().factors.list();
      const rows = list.factors.map((f) => [
        f.factorId,
        f.kind === "totp" ? "authenticator app" : "security key",
        f.name,
        f.lastUsedAt ?? "never",
      ]);
      return {
        json: list,
        text: [
          rows.length
            ? table(["ID", "KIND", "NAME", "LAST USED"], rows)
            : "No second factor: a stolen password is all it takes to download your vaults' ciphertext.",
          `${plural(list.recoveryCodesLeft, "recovery code")} left.${list.required ? " Your organization requires a second factor." : ""}`,
        ].join("\n"),
      };
    },
  },
  {
    path: ["factors", "add-totp"],
    args: [],
    summary: "Start enrolling an authenticator app: prints its secret; then `factors confirm-totp CODE`",
    options: { name: { type: "string", value: "NAME", description: 'what to call it (default "Authenticator app")' } },
    async run(ctx, _args, opts) {
      const setup = await ctx.loggedIn().factors.setupTotp();
      ctx.state.savePending("totp-setup", { setupToken: setup.setupToken, name: opts.name ?? "Authenticator app" });
      return {
        json: { secret: setup.secret, uri: setup.uri },
        text: `Add this to your authenticator app (scan the address as a QR code, or type the secret), then run \`vaultctl factors confirm-totp CODE\` within 5 minutes:\n  ${setup.uri}\n  secret: ${setup.secret}`,
      };
    },
  },
  {
    path: ["factors", "confirm-totp"],
    args: ["<code>"],
    summary: "Finish enrolling the authenticator app with a code it shows (asks for the master password; signs out your other sessions)",
    async run(ctx, [code]) {
      const client = ctx.loggedIn();
      const pending = ctx.state.pending<{ setupToken: string; name: string }>("totp-setup");
      if (!pending) usage("no authenticator app is being enrolled: run `vaultctl factors add-totp` first");
      const password = await readPassword(ctx.passwords, `Master password for ${client.account.email}: `);
      const res = await client.factors.confirmTotp(pending.setupToken, code!, pending.name, password);
      ctx.state.forgetPending("totp-setup");
      return {
        json: res,
        text: [
          `Authenticator app enrolled (${res.factor.factorId}). Logins now ask for a code; your other sessions were signed out.`,
          ...(res.recoveryCodes
            ? [
                "Recovery codes (each signs in once, if you lose the app; keep them offline, they are not shown again):",
                ...res.recoveryCodes.map((c) => `  ${c}`),
              ]
            : []),
        ].join("\n"),
      };
    },
  },
  {
    path: ["factors", "remove"],
    args: ["<factor-id>"],
    summary: "Remove a second factor (asks for the master password; signs out your other sessions)",
    async run(ctx, [factorId]) {
      const client = ctx.loggedIn();
      await client.factors.remove(factorId!, await readPassword(ctx.passwords, `Master password for ${client.account.email}: `));
      return { json: { removed: factorId }, text: `Second factor ${factorId} removed; your other sessions were signed out.` };
    },
  },
  {
    path: ["factors", "recovery-codes"],
    args: [],
    summary: "New recovery codes (the old ones stop working; asks for the master password; signs out your other sessions)",
    async run(ctx) {
      const client = ctx.loggedIn();
      const codes = await client.factors.newRecoveryCodes(
        await readPassword(ctx.passwords, `Master password for ${client.account.email}: `),
      );
      return {
        json: { recoveryCodes: codes },
        text: [
          "New recovery codes (each signs in once; the old ones no longer work; your other sessions were signed out):",
          ...codes.map((c) => `  ${c}`),
        ].join("\n"),
      };
    },
  },
  {
    path: ["passkeys"],
    args: [],
    summary: "The passkeys that sign in to your account (added in the web vault or the extension), and which unlock it",
    async run(ctx) {
      const { passkeys, policy } = await ctx.loggedIn().accountPasskeys.list();
      const rows = passkeys.map((p) => [p.credentialId, p.name, p.unlock ? "signs in, unlocks" : "signs in", p.lastUsedAt ?? "never"]);
      return {
        json: { passkeys, policy },
        text: [
          rows.length ? table(["ID", "NAME", "DOES", "LAST USED"], rows) : "No passkey signs in to your account.",
          `Your organization's passkey policy: ${policy}.`,
        ].join("\n"),
      };
    },
  },
  {
    path: ["passkeys", "remove"],
    args: ["<credential-id>"],
    summary: "Remove a passkey that signs in (a lost one): it signs in and unlocks no more",
    async run(ctx, [credentialId]) {
      await ctx.loggedIn().accountPasskeys.remove(credentialId!);
      return { json: { removed: credentialId }, text: `Passkey ${credentialId} removed: it no longer signs in to your account.` };
    },
  },
  {
    path: ["policies"],
    args: [],
    summary: "Your organization's policies: what the server enforces, and what only clients apply",
    async run(ctx) {
      const p = await ctx.loggedIn().factors.policies();
      const lines = [
        `Second factor required: ${p.requireSecondFactor ? "yes" : "no"}   (enforced by the server)`,
        `Least KDF for new passwords: ${p.minKdf ? `argon2id ${p.minKdf.argon2idMemoryKiB} KiB x ${p.minKdf.argon2idIterations}, or pbkdf2 x ${p.minKdf.pbkdf2Iterations}` : "the server's floor"}   (enforced by the server)`,
        `Longest invite: ${p.inviteMaxLifetime ?? "30d"}   (enforced by the server)`,
        `Fewest recovery trustees: ${p.recoveryMinThreshold}   (enforced by the server)`,
        `Signing in with a passkey: ${p.passkeySignIn ?? "allowed"}   (enforced by the server)`,
        `Least password strength: ${p.client.minPasswordScore} of 4   (applied by clients only)`,
        `Idle lock: ${p.client.idleLockMinutes === undefined ? "none" : `${p.client.idleLockMinutes} min`}   (applied by clients only)`,
      ];
      return { json: p, text: lines.join("\n") };
    },
  },
  {
    path: ["policies", "set"],
    args: [],
    summary: "Set your organization's policies (owners)",
    options: {
      "require-2fa": { type: "string", value: "yes|no", description: "members without a second factor may only enrol one" },
      "invite-max": { type: "string", value: "DURATION", description: "the longest lifetime of a new invite, like 72h" },
      "recovery-min": { type: "string", value: "K", description: "the fewest trustees an account recovery may need (2 or more)" },
      passkeys: {
        type: "string",
        value: "allowed|forbidden|required",
        description: "signing in with a passkey: required refuses the password alone to a member who has one",
      },
      "confirm-lock-out": {
        type: "string",
        value: "POLICIES",
        description:
          "set them even though they shut people out (the refusal names who): comma-separated, of requireSecondFactor, recoveryMinThreshold, inviteMaxLifetime",
      },
    },
    async run(ctx, _args, opts) {
      const client = ctx.loggedIn();
      const now = await client.factors.policies();
      const confirmLockOut = lockOutPolicies(opts["confirm-lock-out"]);
      const p = await client.factors.setPolicies({
        requireSecondFactor: opts["require-2fa"] === undefined ? now.requireSecondFactor : opts["require-2fa"] === "yes",
        ...(now.minKdf && { minKdf: now.minKdf }),
        ...((opts["invite-max"] ?? now.inviteMaxLifetime) !== undefined && {
          inviteMaxLifetime: opts["invite-max"] ?? now.inviteMaxLifetime,
        }),
        recoveryMinThreshold: opts["recovery-min"] === undefined ? now.recoveryMinThreshold : Number(opts["recovery-min"]),
        passkeySignIn: passkeyPolicy(opts.passkeys) ?? now.passkeySignIn ?? "allowed",
        client: now.client,
        ...(confirmLockOut && { confirmLockOut }),
      });
      return { json: p, text: "Policies set." };
    },
  },
  {
    path: ["recovery", "enrol"],
    args: ["<trustee...>"],
    summary: "Let K of these owners or admins recover your account if you forget your password (their keys must be verified here)",
    options: { k: { type: "string", value: "K", description: "how many trustees must approve (default 2)" } },
    async run(ctx, trustees, opts) {
      const client = await ctx.unlocked();
      const ids = [];
      for (const ref of trustees) ids.push((await findUser(client, ref)).userId);
      const k = opts.k === undefined ? 2 : Number(opts.k);
      await client.recovery.enrol(ids, k);
      return {
        json: { threshold: k, trustees: ids },
        text: `Enrolled: any ${k} of ${trustees.join(", ")} can help you recover your account. None of them, nor the server, can open it alone.`,
      };
    },
  },
  {
    path: ["recovery", "status"],
    args: [],
    summary: "Your recovery enrolment (checked against your signature) and the requests to recover your account",
    async run(ctx) {
      const client = ctx.loggedIn();
      const status = await client.recovery.status();
      const { requests } = await client.recovery.requests();
      const lines = [
        status
          ? `Enrolled${status.version === undefined ? "" : ` (enrolment ${status.version})`}: ${status.threshold} of ${status.trustees.length} trustees (${status.trustees.join(", ")})${
              !status.current
                ? " — STALE: made under an earlier password or keys; enrol again"
                : status.version === undefined
                  ? " — made before enrolments had versions: enrol again, so that your trustees can tell it from one you replaced"
                  : ""
            }`
          : "Not enrolled in account recovery.",
        ...requests.map(
          (r) =>
            `Request ${r.requestId}: ${r.status}, made ${r.createdAt}${r.approvedBy?.length ? `, approved by ${r.approvedBy.join(", ")}` : ""}`,
        ),
        ...(requests.some((r) => r.status === "pending")
          ? ["A pending request you did not make: cancel it with `vaultctl recovery cancel ID`."]
          : []),
      ];
      return { json: { enrolment: status, requests }, text: lines.join("\n") };
    },
  },
  {
    path: ["recovery", "cancel"],
    args: ["<request-id>"],
    summary: "Cancel a pending request to recover your account",
    async run(ctx, [requestId]) {
      await ctx.loggedIn().recovery.cancel(requestId!);
      return { json: { cancelled: requestId }, text: `Request ${requestId} cancelled.` };
    },
  },
  {
    path: ["recovery", "tasks"],
    args: [],
    summary: "Recovery requests you are a trustee of",
    async run(ctx) {
      const tasks = await (await ctx.loggedIn()).recovery.tasks();
      const rows = tasks.map((t) => [
        t.requestId,
        t.email,
        t.createdAt,
        `${t.approvedBy.length}/${t.threshold}`,
        t.approved ? "yes" : "no",
        t.legacy ? "unversioned" : String(t.version),
      ]);
      return {
        json: tasks,
        text: rows.length
          ? table(["REQUEST", "FOR", "MADE", "APPROVALS", "YOU", "ENROLMENT"], rows)
          : "No recovery request names you as a trustee.",
      };
    },
  },
  {
    path: ["recovery", "approve"],
    args: ["<request-id>"],
    summary: "Approve a recovery once the person read you the code their new device shows (call them; do not trust a message)",
    options: { code: { type: "string", value: "CODE", description: "the code they read out to you" } },
    async run(ctx, [requestId], opts) {
      if (!opts.code) usage("ask the person for the code their new device shows, over a call you trust, and give it with --code");
      const client = await ctx.unlocked();
      const { confirmation } = await client.recovery.approve(requestId!, opts.code);
      return {
        json: { approved: requestId, confirmation },
        text: `Approved: your share went to that device only. Now read this back to them, on the same call:\n\n    ${confirmation}\n`,
      };
    },
  },
  {
    path: ["recover", "start"],
    args: ["<email>"],
    summary: "Forgot your master password? Ask your trustees to recover your account from this device",
    async run(ctx, [email]) {
      // A request this machine started before for the same server is replaced, not added to.
      const before = ctx.state.pending<PendingRecovery & { server?: string }>("recovery");
      const pending = await ctx.anonymous().recovery.start(email!, before?.server === ctx.server ? before : undefined);
      // The server is kept with it: the request's secret goes to that server only.
      ctx.state.savePending("recovery", { ...pending, server: ctx.server });
      return {
        json: { requestId: pending.requestId, code: pending.code, expiresAt: pending.expiresAt },
        text: `Asked. Call each of your trustees and read them this code (nobody else needs it):\n\n    ${pending.code}\n\nThen run \`vaultctl recover finish\`. The request ends ${pending.expiresAt}.`,
      };
    },
  },
  {
    path: ["recover", "finish"],
    args: [],
    summary: "With enough approvals: open your account here, choose a new master password, and get new keys",
    options: { confirm: { type: "string", value: "CODE", description: "the code a trustee read back to you after approving" } },
    async run(ctx, _args, opts) {
      const pending = ctx.state.pending<PendingRecovery & { server?: string }>("recovery");
      if (!pending) usage("no recovery is under way here: run `vaultctl recover start EMAIL` first");
      if (pending.server !== ctx.server)
        usage(`the recovery under way here was asked of ${pending.server}, not ${ctx.server}: use --server ${pending.server}`);
      const client: VaultClient = ctx.anonymous();
      const progress = await client.recovery.progress(pending);
      if (progress.approvals < progress.threshold)
        return {
          json: progress,
          text: `${progress.approvals} of ${progress.threshold} approvals so far: run this again once more trustees approved.`,
        };
      if (!opts.confirm)
        usage("give the code a trustee read back to you after approving, with --confirm: it vouches that the keys opened here are yours");
      const password = await readPassword(ctx.passwords, "Choose a new master password: ", { confirm: true });
      const account = await client.recovery.finish(pending, password, opts.confirm);
      ctx.state.forgetPending("recovery");
      ctx.state.forgetUnlocked();
      saveLogin(ctx, client);
      return {
        json: { userId: account.userId, email: account.email },
        text: `Recovered: ${account.email} has a new master password and new keys; every other session ended. Enrol in recovery again (\`vaultctl recovery enrol\`): this one is used up.`,
      };
    },
  },
];

/** `--confirm-lock-out`'s policies, each one the server may refuse as shutting people out. */
function lockOutPolicies(raw: string | undefined): LockOutPolicy[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw.split(",").map((n) => n.trim());
  const known: readonly string[] = ["requireSecondFactor", "recoveryMinThreshold", "inviteMaxLifetime"];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new UsageError(`--confirm-lock-out: unknown policy ${unknown.join(", ")} (of ${known.join(", ")})`);
  return names as LockOutPolicy[];
}

/** `--passkeys` as given: one of the three policies, else a usage error. */
function passkeyPolicy(raw: string | undefined): PasskeySignInPolicy | undefined {
  if (raw === undefined) return undefined;
  if (raw === "allowed" || raw === "forbidden" || raw === "required") return raw;
  return usage("--passkeys takes allowed, forbidden or required");
}
