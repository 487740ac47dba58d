/** A small HTTP client for the tests, and the steps every scenario needs (register, login, invite). */
import { randomBytes, randomUUID } from "node:crypto";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared, type UserKeys } from "./crypto";

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, for malformed bodies. */
  raw?: string;
  headers?: Record<string, string>;
}

export class Api {
  constructor(readonly url: string) {}

  async call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let payload: string | undefined;
    if (opts.raw !== undefined) payload = opts.raw;
    else if (opts.body !== undefined) payload = JSON.stringify(opts.body);
    if (payload !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
    const res = await fetch(this.url + path, { method, headers, body: payload });
    const text = await res.text();
    let body: unknown = text;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    } else body = undefined;
    return { status: res.status, body: body as T, headers: res.headers };
  }

  get = <T = any>(path: string, opts?: CallOptions) => this.call<T>("GET", path, opts);
  post = <T = any>(path: string, opts?: CallOptions) => this.call<T>("POST", path, opts);
  put = <T = any>(path: string, opts?: CallOptions) => this.call<T>("PUT", path, opts);
  patch = <T = any>(path: string, opts?: CallOptions) => this.call<T>("PATCH", path, opts);
  delete = <T = any>(path: string, opts?: CallOptions) => this.call<T>("DELETE", path, opts);
}

export interface TestUser {
  userId: string;
  orgId: string;
  role: string;
  email: string;
  keys: UserKeys;
  bundle: ReturnType<typeof registrationBundle>;
  token: string;
  refreshToken: string;
}

export const uniqueEmail = (tag = "user") => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** Registers (with an invite token, or as the first user / in open mode) and logs in. */
export async function registerUser(
  api: Api,
  opts: { inviteToken?: string; email?: string; keys?: UserKeys; orgName?: string } = {},
): Promise<TestUser> {
  const keys = opts.keys ?? (await newUserKeys());
  const email = opts.email ?? uniqueEmail();
  const bundle = registrationBundle(keys);
  const reg = await api.post("/auth/register", { body: { email, ...bundle, inviteToken: opts.inviteToken, orgName: opts.orgName } });
  if (reg.status !== 201) throw new Error(`register failed: ${reg.status} ${JSON.stringify(reg.body)}`);
  const login = await api.post("/auth/login", { body: { email, authHash: bundle.authHash } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  return { ...reg.body, email, keys, bundle, token: login.body.accessToken, refreshToken: login.body.refreshToken };
}

export async function invite(api: Api, by: TestUser, role: "admin" | "member" = "member", email = uniqueEmail(role), expiresIn?: string) {
  const res = await api.post("/invites", { token: by.token, body: { email, role, expiresIn } });
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, inviteId: res.body.inviteId as string, token: res.body.token as string };
}

/** An organization: its owner (first user of the server, or open mode) and invited users. */
export async function newOrg(api: Api, members: Array<"admin" | "member"> = []): Promise<{ owner: TestUser; users: TestUser[] }> {
  const owner = await registerUser(api);
  const users: TestUser[] = [];
  for (const role of members) {
    const inv = await invite(api, owner, role);
    users.push(await registerUser(api, { inviteToken: inv.token, email: inv.email }));
  }
  return { owner, users };
}

/** Shares a vault key with a user as `sender`: wraps it for the recipient's RSA key and signs the wrap. */
export function shareBody(vaultKey: Buffer, sender: TestUser, recipient: TestUser, role: "admin" | "member" = "member") {
  const wrapped = wrapShared(vaultKey, recipient.bundle.publicKey);
  return {
    recipientUserId: recipient.userId,
    encryptedVaultKey: b64(wrapped),
    wrapSignature: b64(signWrap(wrapped, sender.keys.edPrivate)),
    role,
  };
}

/** The body of POST /vaults for a shared vault whose key is wrapped for its creator. */
export function sharedVaultBody(vaultKey: Buffer, owner: TestUser, name = "Team") {
  const wrapped = wrapShared(vaultKey, owner.bundle.publicKey);
  return { name, type: "shared", encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, owner.keys.edPrivate)) };
}

/** A shared vault created by `owner` and shared with `members` (each with its role). */
export async function sharedVault(api: Api, owner: TestUser, members: Array<[TestUser, "admin" | "member"]> = [], name = "Team") {
  const vaultKey = randomBytes(32);
  const res = await api.post("/vaults", { token: owner.token, body: sharedVaultBody(vaultKey, owner, name) });
  if (res.status !== 201) throw new Error(`create vault failed: ${res.status} ${JSON.stringify(res.body)}`);
  for (const [user, role] of members) {
    const share = await api.post(`/vaults/${res.body.vaultId}/members`, {
      token: owner.token,
      body: shareBody(vaultKey, owner, user, role),
    });
    if (share.status !== 204) throw new Error(`share failed: ${share.status} ${JSON.stringify(share.body)}`);
  }
  return { vaultId: res.body.vaultId as string, vaultKey };
}

/** The rekey a client sends: a new key wrapped for every listed member and signed by `by`, every item re-encrypted. */
export function rekeyBody(
  newKey: Buffer,
  by: TestUser,
  holders: TestUser[],
  items: Array<{ itemId: string; encryptedData: string; encryptedName: string }>,
) {
  return {
    newKeys: holders.map((h) => {
      const wrapped = wrapShared(newKey, h.bundle.publicKey);
      return { userId: h.userId, encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, by.keys.edPrivate)) };
    }),
    items,
  };
}
