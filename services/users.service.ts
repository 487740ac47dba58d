/** The caller's profile and other users' public keys (contract section 2). */
import type { UserId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { notFound, unauthorized } from "../lib/errors";
import { callerOf, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";

type Ctx<P = unknown> = Context<P, RequestMeta>;

export function usersService({ store }: Runtime): ServiceSchema {
  return {
    name: "users",
    actions: {
      me: {
        async handler(ctx: Ctx) {
          const user = await store.accounts.findUserById(callerOf(ctx).userId);
          if (!user) throw unauthorized("The token's user no longer exists");
          return { userId: user.userId, email: user.email, orgId: user.orgId, role: user.role, createdAt: user.createdAt };
        },
      },
      keys: {
        params: paramsOf("users.keys"),
        async handler(ctx: Ctx<{ userId: UserId }>) {
          const caller = callerOf(ctx);
          const user = await store.accounts.findUserById(ctx.params.userId);
          // Users of other organizations do not exist for the caller.
          if (!user || user.orgId !== caller.orgId) throw notFound("User");
          return {
            userId: user.userId,
            email: user.email,
            publicKey: user.publicKey,
            signingPublicKey: user.signingPublicKey,
            publicKeySignature: user.publicKeySignature,
          };
        },
      },
    },
  };
}
