/**
 * Sign-in passkeys on MongoDB (the port: ../port/security.ts; SQL: ../sql/passkey-logins.ts).
 * `rewrapPasskeysIn` re-wraps every passkey's unlock inside a password change's or key rotation's
 * transaction, after `decidePasskeyRewraps` under the account's lock (its document written).
 */
import type { ClientSession } from "mongodb";
import { decidePasskeyEnrolment, decidePasskeyRewraps, type PasskeyLogin, type PasskeyRewrap } from "../../domain/accounts/passkey-logins";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, SecurityStore } from "../port";
import type { MongoContext } from "./context";
import { passkeyLoginDoc, toPasskeyLogin } from "./documents";
import { writeOutbox } from "./outbox";
import { lockAccount } from "./writes";

async function listIn(c: MongoContext, userId: UserId, session?: ClientSession): Promise<PasskeyLogin[]> {
  const docs = await c.passkeyLogins
    .find({ userId }, session && { session })
    .sort({ createdAt: 1, _id: 1 })
    .toArray();
  return docs.map(toPasskeyLogin);
}

/**
 * Under the account's lock (the caller's transaction wrote its document): the re-wraps checked
 * against exactly the passkeys that keep an unlock, then written.
 */
export async function rewrapPasskeysIn(
  c: MongoContext,
  session: ClientSession,
  userId: UserId,
  given: readonly PasskeyRewrap[],
): Promise<void> {
  decidePasskeyRewraps(await listIn(c, userId, session), given);
  if (given.length === 0) return;
  await c.passkeyLogins.bulkWrite(
    given.map((g) => ({
      updateOne: {
        filter: { _id: g.credentialId, userId },
        update: { $set: { wrappedStretchedKey: g.wrappedStretchedKey, keptWrappedKey: g.keptWrappedKey } },
      },
    })),
    { session, ordered: true },
  );
}

/** The sign-in passkeys' part of the security aggregate (MongoSecurity extends it). */
export class MongoPasskeyLogins {
  constructor(protected readonly c: MongoContext) {}

  listPasskeyLogins(userId: UserId): Promise<PasskeyLogin[]> {
    return listIn(this.c, userId);
  }

  async findPasskeyLogin(credentialId: string): Promise<PasskeyLogin | null> {
    const doc = await this.c.passkeyLogins.findOne({ _id: credentialId });
    return doc ? toPasskeyLogin(doc) : null;
  }

  async addPasskeyLogin({ login: l, unlockVersion, events }: ArgsOf<SecurityStore["addPasskeyLogin"]>): Promise<void> {
    await this.c.tx(async (session) => {
      // A real write to the account: a password change or key rotation meanwhile conflicts with it, and one retries.
      const accountVersion = await lockAccount(this.c, session, l.userId);
      const taken = await this.c.passkeyLogins.findOne({ _id: l.credentialId }, { session, projection: { _id: 1 } });
      const held = await listIn(this.c, l.userId, session);
      // A credential id another account registered counts as registered: one credential signs in one account.
      decidePasskeyEnrolment(taken ? [...held, { credentialId: l.credentialId }] : held, l.credentialId, { accountVersion }, unlockVersion);
      await writeOutbox(this.c, session, events);
      // `_id` is the credential id: another account's registration of it that got past the check is a duplicate key (409).
      await this.c.passkeyLogins.insertOne(passkeyLoginDoc(l), { session });
    });
  }

  async removePasskeyLogin({ userId, credentialId, events }: ArgsOf<SecurityStore["removePasskeyLogin"]>): Promise<boolean> {
    return this.c.tx(async (session) => {
      await lockAccount(this.c, session, userId);
      const gone = await this.c.passkeyLogins.deleteOne({ _id: credentialId, userId }, { session });
      if (gone.deletedCount !== 1) return false;
      await writeOutbox(this.c, session, events);
      return true;
    });
  }

  async usePasskeyLogin({ credentialId, from, to, at }: ArgsOf<SecurityStore["usePasskeyLogin"]>): Promise<boolean> {
    // Conditional, atomic on its document: of two sign-ins with one counter, exactly one moves it.
    // Matched, not modified: a passkey that keeps no counter moves it from 0 to 0, as the SQL UPDATE counts it.
    const r = await this.c.passkeyLogins.updateOne({ _id: credentialId, counter: from }, { $set: { counter: to, lastUsedAt: at } });
    return r.matchedCount === 1;
  }
}
