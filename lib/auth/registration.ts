/**
 * A registration, for the auth service: the invite looked up, the server asked whether it has
 * users, one plan (lib/domain/accounts/registration.ts `planRegistration`), then the account stored: an
 * invitee into the invite's organization, anyone else as the owner of a new one.
 */
import { normalizeEmail } from "../domain/email";
import { newId, type OrgId } from "../domain/ids";
import type { KdfParams, KeyBundle } from "../domain/accounts/keys";
import { hashToken } from "../domain/opaque-tokens";
import { decideInviteLock } from "../domain/accounts/sign-in";
import { decideRegistrationOpen, planRegistration, type RegistrationPlan } from "../domain/accounts/registration";
import type { SignedStatement } from "../domain/types";
import { created, type Ctx } from "../http/context";
import type { Runtime } from "../runtime";
import type { NewUser, UserRecord } from "../store/port";
import { hashAuthHash } from "./auth-hash";
import type { Logins } from "./logins";

export interface RegisterParams extends KeyBundle {
  email: string;
  authHash: string;
  kdf: KdfParams;
  inviteToken?: string;
  orgName?: string;
  keyStatement?: SignedStatement;
  kdfStatement?: SignedStatement;
  inviteBinding?: string;
}

const INVITE_LOCK_MS = 30_000;

export async function register(rt: Runtime, logins: Logins, ctx: Ctx<RegisterParams>) {
  const { store, config, inviteTokens, clock } = rt;
  const p = ctx.params;
  decideRegistrationOpen(config.registrationMode);
  // An invitee's registration is gated by its secret token: only the others count against the address.
  if (p.inviteToken === undefined) await logins.perAddress(ctx.meta.clientIp, "register");
  const address = normalizeEmail(p.email);
  const tokenHash = p.inviteToken !== undefined ? hashToken(p.inviteToken) : undefined;
  const invite = tokenHash ? await inviteTokens.find(tokenHash) : null;
  const now = clock.timestamp();
  const plan = planRegistration(
    {
      mode: config.registrationMode,
      tokenGiven: tokenHash !== undefined,
      invite,
      // Asked only where the answer matters: an invite-only server without an invite.
      hasUsers: !tokenHash && config.registrationMode === "invite" && (await store.accounts.hasUsers()),
      address,
      now,
      policies: invite ? await store.security.getPolicies(invite.orgId) : null,
    },
    { ...p, address },
  );
  const { userId, kdf, inviteBinding } = plan;
  const newUser: NewUser = {
    ...keysOf(p),
    userId,
    email: address,
    authHash: await hashAuthHash(Buffer.from(p.authHash, "base64"), config.scryptCost),
    kdf,
    createdAt: now,
    keyStatement: p.keyStatement,
    kdfStatement: p.kdfStatement,
    inviteBinding,
  };
  const user = plan.invite && tokenHash ? await redeemInvite(rt, plan, newUser, tokenHash) : await foundOrg(rt, plan, newUser);
  rt.events.kick();
  created(ctx, "/users/me");
  return { userId: user.userId, orgId: user.orgId, role: user.role };
}

/** The key bundle a registration stores as the client sent it. */
const keysOf = (p: KeyBundle): KeyBundle => ({
  publicKey: p.publicKey,
  signingPublicKey: p.signingPublicKey,
  publicKeySignature: p.publicKeySignature,
  encryptedPrivateKey: p.encryptedPrivateKey,
  encryptedSigningPrivateKey: p.encryptedSigningPrivateKey,
});

/** An invitee joins the invite's organization: one redemption at a time per token; the store's conditional update decides for real. */
async function redeemInvite(
  { store, inviteTokens, events, metrics, clock }: Runtime,
  plan: RegistrationPlan,
  user: NewUser,
  tokenHash: string,
) {
  const invite = plan.invite!;
  decideInviteLock(await inviteTokens.lockOnce(tokenHash, INVITE_LOCK_MS));
  try {
    const record = await store.accounts.registerWithInvite({
      user,
      inviteId: invite.inviteId,
      now: clock.timestamp(),
      events: [
        events.record("invite.consumed", { actorId: user.userId, orgId: invite.orgId, inviteId: invite.inviteId }),
        events.record("user.registered", { actorId: user.userId, orgId: invite.orgId, targetUserId: user.userId }),
      ],
    });
    await inviteTokens.forget(invite.inviteId);
    metrics.inviteRedeemed();
    return record;
  } finally {
    await inviteTokens.release(tokenHash);
  }
}

/** Anyone else founds an organization and owns it (on an invite-only server, only its first user). */
async function foundOrg({ store, config, events }: Runtime, plan: RegistrationPlan, user: NewUser): Promise<UserRecord> {
  const orgId = newId<OrgId>();
  return store.accounts.registerOwnerOfNewOrg({
    user,
    org: { orgId, name: plan.orgName, createdAt: user.createdAt },
    onlyIfFirstUser: config.registrationMode === "invite",
    events: [events.record("user.registered", { actorId: user.userId, orgId, targetUserId: user.userId })],
  });
}
