/**
 * Rules that belong to one action, checked on the action itself: a broker with no transporter and
 * no gateway (test/helpers/broker.ts), real services, the embedded store and real client crypto.
 * The same rules are checked over HTTP by the e2e suites; here each is one call.
 */
import type { Caller } from "../../lib/domain/types";
import { startBroker, type TestBroker } from "../helpers/broker";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared, newVaultKey, type UserKeys } from "../helpers/crypto";
import { uniqueEmail } from "../helpers/client";

let node: TestBroker;

async function register(extra: { inviteToken?: string; email?: string } = {}): Promise<{ caller: Caller; keys: UserKeys }> {
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  const caller = await node.as(null).call<Caller>("auth.register", { email: extra.email ?? uniqueEmail(), ...bundle, ...extra });
  return { caller, keys };
}

let owner: { caller: Caller; keys: UserKeys };
let member: { caller: Caller; keys: UserKeys };
let stranger: { caller: Caller; keys: UserKeys };

beforeAll(async () => {
  node = await startBroker(["auth", "users", "orgs", "vaults", "members", "invites", "audit"], { REGISTRATION_MODE: "open" });
  owner = await register();
  const email = uniqueEmail("member");
  const invite = await node.as(owner.caller).call("invites.create", { email, role: "member" });
  member = await register({ email, inviteToken: invite.token });
  stranger = await register();
});
afterAll(() => node.stop());

const vaultKey = newVaultKey();

/** The vault key wrapped for `holder` and signed by `sender`, as a client does. */
function wrapFor(holder: { keys: UserKeys }, sender: { keys: UserKeys }) {
  const wrapped = wrapShared(vaultKey, registrationBundle(holder.keys).publicKey);
  return { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, sender.keys.edPrivate)) };
}

function sharedVaultParams(holder: { caller: Caller; keys: UserKeys }, name = "Team") {
  return { name, type: "shared", ...wrapFor(holder, holder) };
}

test("the broker has no transporter and no gateway: the calls below reach the actions directly", () => {
  expect(node.broker.transit).toBeUndefined();
  expect(node.broker.getLocalService("api")).toBeFalsy();
  expect(member.caller).toMatchObject({ orgId: owner.caller.orgId, role: "member" });
});

test("an action that needs a caller refuses a call without one: UNAUTHORIZED", async () => {
  await expect(node.as(null).call("vaults.list")).rejects.toMatchObject({ type: "UNAUTHORIZED" });
});

test("vaults.create checks its route's parameters in the action itself, before any rule", async () => {
  const { type: _, ...withoutType } = sharedVaultParams(owner);
  await expect(node.as(owner.caller).call("vaults.create", withoutType)).rejects.toMatchObject({
    type: "VALIDATION_ERROR",
    data: [expect.objectContaining({ field: "type" })],
  });
  const vault = await node.as(owner.caller).call("vaults.create", sharedVaultParams(owner));
  expect(vault).toMatchObject({ vaultName: "Team", role: "owner", keyVersion: 1, senderId: owner.caller.userId });
});

test("vaults.rename: a blank name is INVALID (field name); a member may not rename (FORBIDDEN)", async () => {
  const vault = await node.as(owner.caller).call("vaults.create", sharedVaultParams(owner));
  await expect(node.as(owner.caller).call("vaults.rename", { vaultId: vault.vaultId, name: "   " })).rejects.toMatchObject({
    type: "INVALID",
    data: { field: "name" },
  });
  await node.as(owner.caller).call("members.add", {
    vaultId: vault.vaultId,
    recipientUserId: member.caller.userId,
    role: "member",
    ...wrapFor(member, owner),
  });
  await expect(node.as(member.caller).call("vaults.rename", { vaultId: vault.vaultId, name: "Mine" })).rejects.toMatchObject({
    type: "FORBIDDEN",
  });
  expect((await node.as(owner.caller).call("vaults.rename", { vaultId: vault.vaultId, name: "Renamed" })).vaultName).toBe("Renamed");
  expect((await node.as(member.caller).call("vaults.get", { vaultId: vault.vaultId })).vaultName).toBe("Renamed");
});

test("vaults.get: a vault the caller is not a member of is NOT_FOUND, like one that does not exist", async () => {
  const vault = await node.as(owner.caller).call("vaults.create", sharedVaultParams(owner));
  await expect(node.as(member.caller).call("vaults.get", { vaultId: vault.vaultId })).rejects.toMatchObject({
    type: "NOT_FOUND",
    message: "Vault not found",
  });
  await expect(node.as(owner.caller).call("vaults.get", { vaultId: crypto.randomUUID() })).rejects.toMatchObject({
    type: "NOT_FOUND",
    message: "Vault not found",
  });
});

test("invites.create: members may not invite; expiresIn is 1s to 30d; the invite expires by the node's clock", async () => {
  await expect(node.as(member.caller).call("invites.create", { email: uniqueEmail(), role: "member" })).rejects.toMatchObject({
    type: "FORBIDDEN",
  });
  for (const expiresIn of ["31d", "0h", "24 h", "1w"]) {
    await expect(node.as(owner.caller).call("invites.create", { email: uniqueEmail(), role: "member", expiresIn })).rejects.toMatchObject({
      type: "INVALID",
      data: { field: "expiresIn" },
    });
  }
  // Two days on by the node's clock (the system's is a moment later): the invite expires 24 h after that.
  node.clock.advance(2 * 86_400_000);
  const before = node.clock.nowMs();
  const invite = await node.as(owner.caller).call("invites.create", { email: uniqueEmail(), role: "admin", expiresIn: "24h" });
  const expiresMs = Date.parse(invite.expiresAt);
  expect(expiresMs).toBeGreaterThanOrEqual(before + 86_400_000);
  expect(expiresMs).toBeLessThanOrEqual(node.clock.nowMs() + 86_400_000);
});

test("orgs.get and orgs.members: FORBIDDEN outside the caller's organization", async () => {
  expect(await node.as(member.caller).call("orgs.get", { orgId: owner.caller.orgId })).toMatchObject({ orgId: owner.caller.orgId });
  for (const action of ["orgs.get", "orgs.members"]) {
    await expect(node.as(stranger.caller).call(action, { orgId: owner.caller.orgId })).rejects.toMatchObject({ type: "FORBIDDEN" });
  }
});

test("users.keys: a user of another organization does not exist for the caller (NOT_FOUND)", async () => {
  expect(await node.as(member.caller).call("users.keys", { userId: owner.caller.userId })).toMatchObject({
    userId: owner.caller.userId,
    publicKey: registrationBundle(owner.keys).publicKey,
  });
  await expect(node.as(stranger.caller).call("users.keys", { userId: owner.caller.userId })).rejects.toMatchObject({
    type: "NOT_FOUND",
  });
});

test("audit.list: only the organization's owners and admins; limit is 1 to 500", async () => {
  await expect(node.as(member.caller).call("audit.list", { orgId: owner.caller.orgId })).rejects.toMatchObject({ type: "FORBIDDEN" });
  await expect(node.as(stranger.caller).call("audit.list", { orgId: owner.caller.orgId })).rejects.toMatchObject({ type: "FORBIDDEN" });
  await expect(node.as(owner.caller).call("audit.list", { orgId: owner.caller.orgId, limit: 501 })).rejects.toMatchObject({
    type: "VALIDATION_ERROR",
    data: [expect.objectContaining({ field: "limit" })],
  });
  // No audit worker runs on this broker: the owner may read the log, which has no record yet.
  expect(await node.as(owner.caller).call("audit.list", { orgId: owner.caller.orgId, limit: 500 })).toEqual({
    events: [],
    nextBefore: null,
  });
});
