/** The caller's profile and statements, and other users' public keys (contract section 2). */
import { decideVisibleUser } from "../lib/domain/access";
import { noStatementGiven, tokenUserGone } from "../lib/domain/refusals";
import type { UserId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { checkKdfStatement, checkKeyStatement } from "../lib/domain/statements";
import type { SignedStatement } from "../lib/domain/types";
import { callerOf, noContent, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { UserRecord } from "../lib/store/port";
import { publicKeysOf } from "../lib/http/views";
import type { Runtime } from "../lib/runtime";

type Ctx<P = unknown> = Context<P, RequestMeta>;

export function usersService({ store }: Runtime): ServiceSchema {
  async function caller(ctx: Ctx): Promise<UserRecord> {
    const user = await store.accounts.findUserById(callerOf(ctx).userId);
    if (!user) throw tokenUserGone();
    return user;
  }

  return {
    name: "users",
    actions: {
      me: {
        async handler(ctx: Ctx) {
          const user = await caller(ctx);
          return { userId: user.userId, email: user.email, orgId: user.orgId, role: user.role, createdAt: user.createdAt };
        },
      },
      keys: {
        params: paramsOf("users.keys"),
        async handler(ctx: Ctx<{ userId: UserId }>) {
          // Users of other organizations do not exist for the caller.
          const user = decideVisibleUser(await store.accounts.findUserById(ctx.params.userId), callerOf(ctx));
          return publicKeysOf(user);
        },
      },
      statements: {
        // An account made before statements existed is upgraded by its own client: it signs both
        // over what the server holds, and the server checks them against that before keeping them.
        params: paramsOf("users.statements"),
        async handler(ctx: Ctx<{ keyStatement?: SignedStatement; kdfStatement?: SignedStatement }>) {
          const user = await caller(ctx);
          const { keyStatement, kdfStatement } = ctx.params;
          if (!keyStatement && !kdfStatement) throw noStatementGiven();
          if (keyStatement) checkKeyStatement(user, keyStatement);
          if (kdfStatement) checkKdfStatement(user, kdfStatement);
          await store.accounts.setStatements({ userId: user.userId, keyStatement, kdfStatement });
          return noContent(ctx);
        },
      },
    },
  };
}
