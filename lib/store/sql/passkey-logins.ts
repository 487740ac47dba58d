/**
 * Sign-in passkeys on SQL (the port: ../port/security.ts; MongoDB: ../mongo/passkey-logins.ts).
 * `rewrapPasskeysIn` re-wraps every passkey's unlock inside a password change's or key rotation's
 * transaction, after `decidePasskeyRewraps` under the account's lock.
 */
import { decidePasskeyEnrolment, decidePasskeyRewraps, type PasskeyLogin, type PasskeyRewrap } from "../../domain/accounts/passkey-logins";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, SecurityStore } from "../port";
import type { Db, SqlContext } from "./context";
import type { PasskeyLoginsTable } from "./schema";
import { writeOutbox } from "./outbox";
import { lockAccount } from "./writes";

function toPasskeyLogin(r: PasskeyLoginsTable): PasskeyLogin {
  return {
    credentialId: r.credential_id,
    userId: r.user_id,
    name: r.name,
    publicKey: r.public_key,
    counter: Number(r.counter),
    ...(r.transports !== null && { transports: JSON.parse(r.transports) as string[] }),
    createdAt: r.created_at,
    ...(r.last_used_at !== null && { lastUsedAt: r.last_used_at }),
    ...(r.prf_wrapped_key !== null &&
      r.wrapped_stretched_key !== null &&
      r.kept_wrapped_key !== null && {
        unlock: { prfWrappedKey: r.prf_wrapped_key, wrappedStretchedKey: r.wrapped_stretched_key, keptWrappedKey: r.kept_wrapped_key },
      }),
  };
}

const listIn = async (db: Db, userId: UserId) =>
  (
    await db.selectFrom("passkey_logins").selectAll().where("user_id", "=", userId).orderBy("created_at").orderBy("credential_id").execute()
  ).map(toPasskeyLogin);

/** Under the account's lock (the caller holds it): the re-wraps checked against exactly the passkeys that keep an unlock, then written. */
export async function rewrapPasskeysIn(trx: Db, userId: UserId, given: readonly PasskeyRewrap[]): Promise<void> {
  decidePasskeyRewraps(await listIn(trx, userId), given);
  for (const g of given) {
    await trx
      .updateTable("passkey_logins")
      .set({ wrapped_stretched_key: g.wrappedStretchedKey, kept_wrapped_key: g.keptWrappedKey })
      .where("credential_id", "=", g.credentialId)
      .where("user_id", "=", userId)
      .execute();
  }
}

/** The sign-in passkeys' part of the security aggregate (SqlSecurity extends it). */
export class SqlPasskeyLogins {
  constructor(protected readonly c: SqlContext) {}

  listPasskeyLogins(userId: UserId): Promise<PasskeyLogin[]> {
    return listIn(this.c.db, userId);
  }

  async findPasskeyLogin(credentialId: string): Promise<PasskeyLogin | null> {
    const row = await this.c.db.selectFrom("passkey_logins").selectAll().where("credential_id", "=", credentialId).executeTakeFirst();
    return row ? toPasskeyLogin(row) : null;
  }

  async addPasskeyLogin({ login: l, unlockVersion, events }: ArgsOf<SecurityStore["addPasskeyLogin"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      const accountVersion = await lockAccount(trx, l.userId);
      const taken = await trx
        .selectFrom("passkey_logins")
        .select("credential_id")
        .where("credential_id", "=", l.credentialId)
        .executeTakeFirst();
      const held = await listIn(trx, l.userId);
      // A credential id another account registered counts as registered: one credential signs in one account.
      decidePasskeyEnrolment(taken ? [...held, { credentialId: l.credentialId }] : held, l.credentialId, { accountVersion }, unlockVersion);
      await writeOutbox(trx, events);
      await trx
        .insertInto("passkey_logins")
        .values({
          credential_id: l.credentialId,
          user_id: l.userId,
          name: l.name,
          public_key: l.publicKey,
          counter: l.counter,
          transports: l.transports ? JSON.stringify(l.transports) : null,
          created_at: l.createdAt,
          last_used_at: l.lastUsedAt ?? null,
          prf_wrapped_key: l.unlock?.prfWrappedKey ?? null,
          wrapped_stretched_key: l.unlock?.wrappedStretchedKey ?? null,
          kept_wrapped_key: l.unlock?.keptWrappedKey ?? null,
        })
        .execute();
    });
  }

  async removePasskeyLogin({ userId, credentialId, events }: ArgsOf<SecurityStore["removePasskeyLogin"]>): Promise<boolean> {
    return this.c.tx(async (trx) => {
      await lockAccount(trx, userId);
      const gone = await trx
        .deleteFrom("passkey_logins")
        .where("credential_id", "=", credentialId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) return false;
      await writeOutbox(trx, events);
      return true;
    });
  }

  async usePasskeyLogin({ credentialId, from, to, at }: ArgsOf<SecurityStore["usePasskeyLogin"]>): Promise<boolean> {
    const r = await this.c.db
      .updateTable("passkey_logins")
      .set({ counter: to, last_used_at: at })
      .where("credential_id", "=", credentialId)
      .where("counter", "=", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
