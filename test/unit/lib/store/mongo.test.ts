/**
 * The MongoDB adapter's parts that need no server: documents mapped to the port's records, the
 * driver's errors in the contract's terms, the refusal of a standalone server, and an unreachable
 * server reported as unavailable. The adapter's behaviour against a real replica set is
 * test/contract/mongo.test.ts, which runs where MONGO_URL is set.
 */
import { newId, type InviteId, type ItemId, type OrgId, type UserId, type VaultId } from "../../../../lib/domain/ids";
import { MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoWriteConcernError, TopologyType } from "mongodb";
import { AppError } from "../../../../lib/errors";
import { alreadyExists, tooLargeForOneTransaction } from "../../../../lib/domain/refusals";
import type { Invite } from "../../../../lib/domain/orgs/invites";
import { openMongoStore } from "../../../../lib/store/mongo/store";
import {
  byCreatedThenId,
  inviteDoc,
  itemKey,
  passkeyLoginDoc,
  toInvite,
  toItem,
  toMemberEntry,
  toPasskeyLogin,
  toUser,
  toVaultView,
  userDoc,
  type ItemDoc,
  type MemberDoc,
  type VaultDoc,
} from "../../../../lib/store/mongo/documents";
import {
  assertTransactionsSupported,
  isMongoUnavailable,
  isTransientTransactionError,
  isUnknownCommitResult,
  translateMongoError,
} from "../../../../lib/store/mongo/errors";
import type { NewUser } from "../../../../lib/store/port";
import type { PasskeyLogin } from "../../../../lib/domain/accounts/passkey-logins";
import { loadConfig, checkSplitDeployment } from "../../../../lib/config";
import { openStore } from "../../../../lib/store";

const now = "2026-11-21T05:50:00.000Z";

describe("documents", () => {
  test("a user survives the trip to a document and back, with its organization and role", () => {
    const user: NewUser = {
      userId: newId<UserId>(),
      email: "ana@example.test",
      authHash: "scrypt$abc",
      createdAt: now,
      kdf: { algorithm: "argon2id", salt: "c2FsdHNhbHRzYWx0c2FsdA==", iterations: 3, memoryKiB: 65536, parallelism: 4 },
      publicKey: "UEs=",
      signingPublicKey: "U1BL",
      publicKeySignature: "U0lH",
      encryptedPrivateKey: "RVBL",
      encryptedSigningPrivateKey: "RVNQSw==",
    };
    const orgId = newId<OrgId>();
    const doc = userDoc(user, orgId, "admin");
    expect(doc._id).toBe(user.userId);
    const { userId, ...rest } = user;
    // A document without a version (all of them until a password change) is at version 1.
    expect(toUser(doc)).toEqual({ userId, orgId, role: "admin", accountVersion: 1, ...rest });
    expect(toUser({ ...doc, accountVersion: 3 }).accountVersion).toBe(3);
    // With its statements and invite binding, as a client of today registers; without them they stay absent.
    const statements = {
      keyStatement: { version: 1, signature: "a2V5" },
      kdfStatement: { version: 1, signature: "a2Rm" },
      inviteBinding: { inviteId: newId<InviteId>(), mac: "bWFj" },
    };
    expect(toUser(userDoc({ ...user, ...statements }, orgId, "member"))).toEqual({
      userId,
      orgId,
      role: "member",
      accountVersion: 1,
      ...rest,
      ...statements,
    });
    expect(Object.keys(doc)).not.toContain("keyStatement");
  });

  test("an invite's statement, attached after it was made, maps back with it", () => {
    const invite: Invite = {
      inviteId: newId<InviteId>(),
      orgId: newId<OrgId>(),
      email: "cy@example.test",
      role: "admin",
      inviterId: newId<UserId>(),
      status: "pending",
      expiresAt: now,
      createdAt: now,
    };
    const statement = { version: 1, signature: "c2ln" };
    expect(toInvite({ ...inviteDoc(invite, "hash"), statement })).toEqual({ ...invite, statement });
    expect(toInvite(inviteDoc(invite, "hash"))).not.toHaveProperty("statement");
  });

  test("a vault and a membership give the port's vault view and member entry, field for field", () => {
    const vault: VaultDoc = {
      _id: newId(),
      orgId: newId<OrgId>(),
      name: "Team",
      type: "shared",
      keyVersion: 3,
      rekeyRequired: true,
      createdAt: now,
      updatedAt: now,
      writeSeq: 9,
    };
    const member: MemberDoc = {
      vaultId: vault._id,
      userId: newId<UserId>(),
      role: "admin",
      encryptedVaultKey: "V1JBUA==",
      senderId: newId(),
      wrapSignature: "U0lH",
      createdAt: now,
      updatedAt: now,
    };
    expect(toVaultView(vault, member)).toEqual({
      vaultId: vault._id,
      vaultName: "Team",
      vaultType: "shared",
      orgId: vault.orgId,
      encryptedVaultKey: "V1JBUA==",
      senderId: member.senderId,
      wrapSignature: "U0lH",
      role: "admin",
      keyVersion: 3,
      rekeyRequired: true,
      createdAt: now,
      updatedAt: now,
    });
    expect(toMemberEntry(vault, member)).toEqual({
      userId: member.userId,
      vaultId: vault._id,
      vaultName: "Team",
      vaultType: "shared",
      encryptedVaultKey: "V1JBUA==",
      senderId: member.senderId,
      wrapSignature: "U0lH",
      role: "admin",
    });
  });

  test("items and invites map back unchanged; the token hash never leaves the document", () => {
    const vaultId = newId<VaultId>();
    const itemId = newId<ItemId>();
    const item: ItemDoc = {
      _id: itemKey(vaultId, itemId),
      itemId,
      vaultId,
      encryptedData: "REFUQQ==",
      encryptedName: "TkFNRQ==",
      revision: 4,
      keyVersion: 2,
      createdAt: now,
      updatedAt: now,
    };
    expect(toItem(item)).toEqual({
      itemId,
      vaultId,
      encryptedData: "REFUQQ==",
      encryptedName: "TkFNRQ==",
      revision: 4,
      keyVersion: 2,
      createdAt: now,
      updatedAt: now,
    });
    const invite: Invite = {
      inviteId: newId<InviteId>(),
      orgId: newId<OrgId>(),
      email: "bo@example.test",
      role: "member",
      inviterId: newId<UserId>(),
      status: "pending",
      expiresAt: now,
      createdAt: now,
    };
    const doc = inviteDoc(invite, "hash-of-token");
    expect(doc).toMatchObject({ _id: invite.inviteId, tokenHash: "hash-of-token" });
    expect(toInvite(doc)).toEqual(invite);
    expect(JSON.stringify(toInvite(doc))).not.toContain("hash-of-token");
  });

  test("a sign-in passkey survives the trip to a document and back, with its unlock or without one", () => {
    const bare: PasskeyLogin = {
      credentialId: "Y3JlZC1pZA",
      userId: newId<UserId>(),
      name: "Laptop",
      publicKey: "cEstY29zZQ",
      counter: 7,
      createdAt: now,
    };
    const bareDoc = passkeyLoginDoc(bare);
    expect(bareDoc._id).toBe(bare.credentialId);
    expect(toPasskeyLogin(bareDoc)).toEqual(bare);
    // Absent stays absent: the driver would store an undefined field as null.
    expect(Object.keys(bareDoc).sort()).toEqual(["_id", "counter", "createdAt", "name", "publicKey", "userId"]);
    const full: PasskeyLogin = {
      ...bare,
      transports: ["internal", "hybrid"],
      lastUsedAt: "2026-11-22T08:00:00.000Z",
      unlock: { prfWrappedKey: "cHJm", wrappedStretchedKey: "c3RyZXRjaGVk", keptWrappedKey: "a2VwdA" },
    };
    const fullDoc = passkeyLoginDoc(full);
    expect(fullDoc).toMatchObject({ prfWrappedKey: "cHJm", wrappedStretchedKey: "c3RyZXRjaGVk", keptWrappedKey: "a2VwdA" });
    expect(toPasskeyLogin(fullDoc)).toEqual(full);
    // An unlock is its three wraps or nothing: two of them open no stretched key.
    const { keptWrappedKey: _kept, ...partial } = fullDoc;
    expect(toPasskeyLogin(partial as typeof fullDoc)).not.toHaveProperty("unlock");
  });

  test("lists are ordered by createdAt, then id, as the contract says", () => {
    const rows = [
      { c: "2026-01-02", id: "a" },
      { c: "2026-01-01", id: "b" },
      { c: "2026-01-01", id: "a" },
    ];
    expect(
      rows.sort(
        byCreatedThenId(
          (r) => r.c,
          (r) => r.id,
        ),
      ),
    ).toEqual([
      { c: "2026-01-01", id: "a" },
      { c: "2026-01-01", id: "b" },
      { c: "2026-01-02", id: "a" },
    ]);
  });
});

describe("errors", () => {
  test("a duplicate key is 409 CONFLICT; a write conflict that outlived the driver's retries too", () => {
    const dup = translateMongoError(
      new MongoServerError({ message: "E11000 duplicate key error collection: users index: email_1", code: 11000 }),
    );
    expect(dup).toBeInstanceOf(AppError);
    expect(dup).toMatchObject({ type: "CONFLICT", code: 409, message: alreadyExists().message });
    const lost = translateMongoError(
      new MongoServerError({ message: "WriteConflict", code: 112, errorLabels: ["TransientTransactionError"] }),
    );
    expect(lost).toMatchObject({ type: "CONFLICT", message: expect.stringMatching(/changed meanwhile/) });
  });

  test("refusals pass unchanged; anything else that is not a 'not now' is not disguised", () => {
    const refusal = new AppError("INVALID", "no", { field: "newKeys" });
    expect(translateMongoError(refusal)).toBe(refusal);
    const other = new MongoServerError({ message: "Unauthorized", code: 13 });
    expect(translateMongoError(other)).toBe(other);
    expect(isMongoUnavailable(other)).toBe(false);
  });

  test("only a write conflict is a lost race (409); a stepdown, no primary, the lifetime limit, a lost majority or the network are 503", () => {
    const lostRace = new MongoServerError({
      message: "WriteConflict",
      code: 112,
      codeName: "WriteConflict",
      errorLabels: ["TransientTransactionError"],
    });
    expect(translateMongoError(lostRace)).toMatchObject({ type: "CONFLICT", code: 409 });
    expect(isMongoUnavailable(lostRace)).toBe(false);
    const notNow = [
      new MongoServerError({
        message: "not primary",
        code: 10107,
        codeName: "NotWritablePrimary",
        errorLabels: ["TransientTransactionError"],
      }),
      new MongoServerError({ message: "stepped down", code: 189, codeName: "PrimarySteppedDown" }),
      new MongoServerError({ message: "interrupted", code: 11602, codeName: "InterruptedDueToReplStateChange" }),
      new MongoServerError({
        message: "Aborted transaction for exceeding lifetime",
        code: 290,
        codeName: "TransactionExceededLifetimeLimitSeconds",
      }),
      new MongoServerError({
        message: "no such transaction",
        code: 251,
        codeName: "NoSuchTransaction",
        errorLabels: ["TransientTransactionError"],
      }),
      new MongoServerError({ message: "operation exceeded time limit", code: 50, codeName: "MaxTimeMSExpired" }),
      new MongoServerError({ message: "shutting down", code: 91, codeName: "ShutdownInProgress" }),
      new MongoServerError({ message: "commit outcome unknown", code: 6, errorLabels: ["UnknownTransactionCommitResult"] }),
      new MongoWriteConcernError({ writeConcernError: { code: 64, errmsg: "waiting for replication timed out" } } as never),
      new MongoNetworkError("connection refused"),
      new MongoServerSelectionError("Server selection timed out", { type: TopologyType.ReplicaSetNoPrimary, servers: new Map() } as never),
    ];
    for (const err of notNow) {
      expect(isMongoUnavailable(err)).toBe(true);
      expect(translateMongoError(err)).toMatchObject({ type: "UNAVAILABLE", code: 503, message: "The database is unavailable" });
    }
  });

  test("a transaction too large for the server's cache (or 16 MiB) is a clear 413, never a 5xx", () => {
    for (const err of [
      new MongoServerError({
        message: "Transaction is too large and will not fit in the storage engine cache",
        code: 313,
        codeName: "TransactionTooLargeForCache",
      }),
      new MongoServerError({
        message: "Total size of all transaction operations must be less than 16793600",
        code: 257,
        codeName: "TransactionTooLarge",
      }),
    ]) {
      expect(translateMongoError(err)).toMatchObject({
        type: "PAYLOAD_TOO_LARGE",
        code: 413,
        message: "The change is too large for one database transaction",
      });
      expect(translateMongoError(err)).toMatchObject({ message: tooLargeForOneTransaction().message });
      expect(isMongoUnavailable(err)).toBe(false);
      expect(isTransientTransactionError(err)).toBe(false);
    }
  });

  test("the transaction loop retries what the driver labels transient, and commits again only when the outcome is unknown", () => {
    expect(
      isTransientTransactionError(
        new MongoServerError({ message: "WriteConflict", code: 112, errorLabels: ["TransientTransactionError"] }),
      ),
    ).toBe(true);
    expect(isTransientTransactionError(new MongoServerError({ message: "dup", code: 11000 }))).toBe(false);
    expect(isTransientTransactionError(new AppError("CONFLICT", "taken"))).toBe(false);
    expect(
      isUnknownCommitResult(new MongoServerError({ message: "timeout", code: 50, errorLabels: ["UnknownTransactionCommitResult"] })),
    ).toBe(true);
    expect(
      isUnknownCommitResult(new MongoServerError({ message: "WriteConflict", code: 112, errorLabels: ["TransientTransactionError"] })),
    ).toBe(false);
  });

  test("a standalone server is refused with a message that says what to do; a replica set or mongos is accepted", () => {
    expect(() => assertTransactionsSupported({ isWritablePrimary: true } as never)).toThrow(
      /standalone MongoDB server, which cannot run transactions.*--replSet rs0.*rs\.initiate\(\)/,
    );
    expect(() => assertTransactionsSupported({ setName: "rs0" })).not.toThrow();
    expect(() => assertTransactionsSupported({ msg: "isdbgrid" })).not.toThrow();
  });

  test("no server at the URL: opening fails as unavailable, in the time asked for", async () => {
    const started = Date.now();
    const err = await openMongoStore("mongodb://127.0.0.1:1/vault", { serverSelectionTimeoutMS: 300 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMongoUnavailable(err)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe("settings", () => {
  test("MONGO_URL selects MongoDB; with DATABASE_URL too, or not a mongodb URL, the start is refused", () => {
    expect(loadConfig({ MONGO_URL: "mongodb://mongo:27017/vault?replicaSet=rs0" }).mongoUrl).toBe(
      "mongodb://mongo:27017/vault?replicaSet=rs0",
    );
    expect(() => loadConfig({ MONGO_URL: "mongodb://m/v", DATABASE_URL: "postgres://p/v" })).toThrow(/not both/);
    expect(() => loadConfig({ MONGO_URL: "postgres://p/v" })).toThrow(/mongodb:\/\//);
    const split = loadConfig({
      TRANSPORTER: "nats://127.0.0.1:4222",
      MONGO_URL: "mongodb://m/v",
      JWT_SECRET: Buffer.alloc(32, 1).toString("base64"),
    });
    expect(() => checkSplitDeployment(split)).not.toThrow();
  });

  test("the server's store opener goes to MongoDB for MONGO_URL (here: nobody listening, so it fails as unavailable)", async () => {
    const err = await openStore(loadConfig({ MONGO_URL: "mongodb://127.0.0.1:1/vault" })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMongoUnavailable(err)).toBe(true);
  }, 30_000);
});
