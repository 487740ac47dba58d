/**
 * The policies form without the page: what its inputs hold, the bounds the server checks each
 * value against, the change an owner asks for, and who a refused change would shut out, as the
 * server's answer names them.
 */
import { ApiError, type LockOutPolicy, type PasskeySignInPolicy, type Policies } from "../../../../sdk";

/**
 * Each number's bounds, as the server checks them (lib/domain/orgs/policies.ts, `decidePolicies`).
 * The web vault may not import the server's code, so they are written out here; the web vault's
 * tests compare the two.
 */
export const POLICY_BOUNDS = {
  argon2idMemoryKiB: { min: 19_456, max: 1_048_576 },
  argon2idIterations: { min: 2, max: 10 },
  pbkdf2Iterations: { min: 600_000, max: 2_000_000 },
  recoveryMinThreshold: { min: 2, max: 10 },
  minPasswordScore: { min: 0, max: 4 },
  idleLockMinutes: { min: 1, max: 24 * 60 },
} as const;

/** A duration as the server reads one (lib/domain/duration.ts): a whole number, then s, m, h or d. */
export const DURATION_PATTERN = "[1-9][0-9]{0,9}[smhd]";

/** The form's values as typed: an empty field stands for the server's default. */
export interface PolicyForm {
  requireSecondFactor: boolean;
  passkeySignIn: PasskeySignInPolicy;
  argon2idMemoryKiB: string;
  argon2idIterations: string;
  pbkdf2Iterations: string;
  inviteMaxLifetime: string;
  recoveryMinThreshold: string;
  minPasswordScore: string;
  idleLockMinutes: string;
}

/** The policies an owner asks the server to store. */
export type PolicyChange = Omit<Policies, "enforced" | "clientOnly">;

/** One way a change shuts people out: the form's label of the policy at fault, and who, and why. */
export interface LockOut {
  label: string;
  who: string;
}

/** The policies the server may refuse for shutting people out, with the form's label of each. */
const LOCK_OUT_LABELS: Record<LockOutPolicy, string> = {
  requireSecondFactor: "Require a second factor",
  recoveryMinThreshold: "Fewest recovery trustees",
  inviteMaxLifetime: "Longest invite",
};
const LOCK_OUT_POLICIES = Object.keys(LOCK_OUT_LABELS) as LockOutPolicy[];

const text = (n: number | undefined) => (n === undefined ? "" : String(n));

export function formOf(p: Policies): PolicyForm {
  return {
    requireSecondFactor: p.requireSecondFactor,
    passkeySignIn: p.passkeySignIn ?? "allowed",
    argon2idMemoryKiB: text(p.minKdf?.argon2idMemoryKiB),
    argon2idIterations: text(p.minKdf?.argon2idIterations),
    pbkdf2Iterations: text(p.minKdf?.pbkdf2Iterations),
    inviteMaxLifetime: p.inviteMaxLifetime ?? "",
    recoveryMinThreshold: String(p.recoveryMinThreshold),
    minPasswordScore: String(p.client.minPasswordScore),
    idleLockMinutes: text(p.client.idleLockMinutes),
  };
}

/**
 * The change the form asks for. The server takes the least KDF as three numbers or none: a number
 * left empty beside others is the server's floor for it, which every new password meets anyway.
 */
export function changeOf(f: PolicyForm): PolicyChange {
  const kdf = [f.argon2idMemoryKiB, f.argon2idIterations, f.pbkdf2Iterations].map((v) => v.trim());
  const orFloor = (v: string, bound: { min: number }) => (v === "" ? bound.min : Number(v));
  const invite = f.inviteMaxLifetime.trim();
  const idle = f.idleLockMinutes.trim();
  return {
    requireSecondFactor: f.requireSecondFactor,
    // Always sent: the form shows it (the server keeps the current one only for a change without it).
    passkeySignIn: f.passkeySignIn,
    ...(kdf.some((v) => v !== "") && {
      minKdf: {
        argon2idMemoryKiB: orFloor(kdf[0]!, POLICY_BOUNDS.argon2idMemoryKiB),
        argon2idIterations: orFloor(kdf[1]!, POLICY_BOUNDS.argon2idIterations),
        pbkdf2Iterations: orFloor(kdf[2]!, POLICY_BOUNDS.pbkdf2Iterations),
      },
    }),
    ...(invite !== "" && { inviteMaxLifetime: invite }),
    recoveryMinThreshold: Number(f.recoveryMinThreshold),
    client: { minPasswordScore: Number(f.minPasswordScore), ...(idle !== "" && { idleLockMinutes: Number(idle) }) },
  };
}

/** What requiring a second factor does to an owner who has none, said before the server is asked. */
export function ownFactorLockOut(email: string): LockOut {
  return {
    label: LOCK_OUT_LABELS.requireSecondFactor,
    who: `you (${email}) have no second factor: once one is required, every session of yours can only enrol one until you have`,
  };
}

/**
 * The server's refusal of a change that shuts people out (`policyShutsOut`, 409), read into its
 * lock-outs and the policies to confirm; null for any other error. The answer carries them in its
 * message only: "This change would shut people out. <policy>: <who>. … To make it anyway, send …".
 */
export function lockOutsIn(err: unknown): { lockOuts: LockOut[]; confirm: LockOutPolicy[] } | null {
  const first = LOCK_OUT_POLICIES.find((p) => err instanceof ApiError && err.status === 409 && err.field === p);
  if (!first || !(err instanceof ApiError)) return null;
  const body = err.message.replace(/^This change would shut people out\.\s*/, "").replace(/\s*To make it anyway[\s\S]*$/, "");
  const parts = body.split(new RegExp(`(?:^|\\s)(${LOCK_OUT_POLICIES.join("|")}): `));
  const found: Array<{ policy: LockOutPolicy; who: string }> = [];
  for (let i = 1; i + 1 < parts.length; i += 2) found.push({ policy: parts[i] as LockOutPolicy, who: parts[i + 1]!.replace(/\.$/, "") });
  if (found.length === 0) found.push({ policy: first, who: body });
  return {
    lockOuts: found.map((l) => ({ label: LOCK_OUT_LABELS[l.policy], who: l.who })),
    confirm: [...new Set(found.map((l) => l.policy))],
  };
}
