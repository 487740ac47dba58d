/**
 * Emergency access (format: protocol/formats/emergency.ts; why and how: docs/design/emergency-access.md).
 * The grantor's device wraps the account's stretched key to the grantee's keys as this device has
 * them pinned and verified, never as the server states them, and signs what the grant is. Every
 * grant the server shows is checked against that signature, so neither its level, its wait, its
 * people nor its key are the server's to choose; a released key is taken only when it opens the
 * grantor's keys as this device knows them.
 */
import { fromBase64, toBase64 } from "../../protocol/encoding";
import { keyFingerprint, openAccountKeys } from "../../protocol/crypto/keys";
import { rsaOaepUnwrap, rsaOaepWrap, type KdfParams } from "../../protocol/crypto/primitives";
import {
  EMERGENCY_LEVELS,
  grantBytes,
  grantStatement,
  grantStatementOf,
  MAX_WAIT_HOURS,
  MIN_WAIT_HOURS,
  type EmergencyLevel,
  type GrantStatement,
} from "../../protocol/formats/emergency";
import { signStatement, statementVerifies } from "../../protocol/formats/statements";
import { SecurityError } from "../errors";
import type { ClientCore } from "./core";
import type { LoginAnswer } from "./login";
import type { RecoveryVersions } from "./recovery-versions";
import type { Trust } from "./trust";

/** A grant as the server serves it: what was signed (the wrapped key's hash), and its request. */
interface ServedGrant extends GrantStatement {
  signature: string;
  createdAt: string;
  updatedAt: string;
  status: "idle" | "waiting" | "released" | "stale";
  requestedAt?: string;
  availableAt?: string;
  refusedAt?: string;
  openedAt?: string;
}

/** A grant checked against its grantor's signature: the other party's email is the one this device pinned for them. */
export interface EmergencyGrant {
  grantId: string;
  grantorId: string;
  granteeId: string;
  /** The other party's email (the grantee's for a grant you made, the grantor's for one made to you). */
  email: string;
  level: EmergencyLevel;
  waitHours: number;
  /** `stale`: made under keys or a password that changed since; it opens nothing until its grantor's device makes it again (`renew`). */
  status: ServedGrant["status"];
  requestedAt?: string;
  /** When a standing request's wait is over (the server's clock). */
  availableAt?: string;
  refusedAt?: string;
  openedAt?: string;
}

/** A released grant, checked and opened: what a fresh client takes up as the grantor (`VaultClient.takeUpEmergency`). */
export interface EmergencyRelease {
  grantId: string;
  level: EmergencyLevel;
  grantor: { userId: string; email: string };
  login: LoginAnswer;
  stretchedKey: Uint8Array<ArrayBuffer>;
  kdf: KdfParams;
}

/** What `renew` did: the grants made again, and the ones it could not make (a grantee's new keys not verified here yet). */
export interface EmergencyRenewal {
  renewed: string[];
  stale: string[];
}

/** Trust in a grantee's keys that something other than the server vouches for. */
const VERIFIED = new Set(["checked", "invite"]);

const tampered = (why: string, userId?: string) => new SecurityError("EMERGENCY_TAMPERED", why, userId);

/** Where this device remembers a grant it revoked or declined (its head store). */
const removedKey = (grantId: string) => `emergency-removed/${grantId}`;

export class EmergencyAccess {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly versions: RecoveryVersions,
  ) {}

  /**
   * Grants `granteeId` (a member whose keys this device verified: compared out of band, or
   * vouched for by an invite) emergency access at `level` after `waitHours`; made again under
   * `grantId` when given (a grant to that member exists).
   */
  async grant(granteeId: string, opts: { level: EmergencyLevel; waitHours: number }, grantId?: string): Promise<EmergencyGrant> {
    const keys = this.core.requireKeys();
    const me = this.core.account.userId;
    const id = granteeId.toLowerCase();
    if (!EMERGENCY_LEVELS.includes(opts.level)) throw new RangeError(`the level is one of ${EMERGENCY_LEVELS.join(", ")}`);
    if (!Number.isInteger(opts.waitHours) || opts.waitHours < MIN_WAIT_HOURS || opts.waitHours > MAX_WAIT_HOURS)
      throw new RangeError(`the wait is a whole number of hours from ${MIN_WAIT_HOURS} to ${MAX_WAIT_HOURS}`);
    // The keys the account's key goes to: the pinned ones (userKeys refuses others), and only a pin the user verified.
    const bundle = await this.trust.userKeys(id);
    const { trust } = await this.trust.fingerprint(id);
    if (!trust || !VERIFIED.has(trust))
      throw new SecurityError(
        "EMERGENCY_GRANTEE_UNVERIFIED",
        `${bundle.email}'s keys are known here only as the server showed them: compare fingerprints with them (trust them) before granting them access`,
        id,
      );
    const wrappedKey = toBase64(await rsaOaepWrap(fromBase64(bundle.publicKey), keys.stretchedKey));
    const form = {
      grantId: (grantId ?? globalThis.crypto.randomUUID()).toLowerCase(),
      grantorId: me,
      granteeId: id,
      granteeKeys: await keyFingerprint(bundle),
      level: opts.level,
      waitHours: opts.waitHours,
      keys: await keyFingerprint(this.core.account),
      kdfVersion: await this.versions.ownKdfVersion(),
    };
    const signature = await signStatement(grantBytes(await grantStatementOf({ ...form, wrappedKey })), keys.signingPrivateKey);
    const { grantId: gid, grantorId: _grantor, ...body } = form;
    const served = await this.core.http.request<ServedGrant>("PUT", `/emergency/grants/${gid}`, {
      body: { ...body, wrappedKey, signature },
    });
    return this.checked(served, "granted");
  }

  /** The grants this account made and the ones made to it, each checked against its grantor's signature (`EMERGENCY_TAMPERED`). */
  async list(): Promise<{ granted: EmergencyGrant[]; received: EmergencyGrant[] }> {
    const served = await this.core.http.request<{ granted: ServedGrant[]; received: ServedGrant[] }>("GET", "/emergency/grants");
    const granted: EmergencyGrant[] = [];
    for (const g of served.granted) granted.push(await this.checked(g, "granted"));
    const received: EmergencyGrant[] = [];
    for (const g of served.received) received.push(await this.checked(g, "received"));
    return { granted, received };
  }

  /**
   * After a password change or key rotation, or a grantee's new keys, a grant is stale: it opens
   * nothing until made again. Makes `grantId` (or every stale grant of this account) again, with the
   * level and wait this account signed, to the grantee's keys as verified here: call it only once
   * the person has seen and confirmed what is made again (a server can list a grant of theirs they
   * since replaced or revoked on another device). Answers the grants made again and the ones that
   * could not be (not signed by this account, revoked on this device, or a grantee whose new keys
   * are not verified here yet).
   */
  async renew(grantId?: string): Promise<EmergencyRenewal> {
    const { granted } = await this.core.http.request<{ granted: ServedGrant[] }>("GET", "/emergency/grants");
    const renewed: string[] = [];
    const stale: string[] = [];
    const wanted = grantId?.toLowerCase();
    for (const served of granted.filter((x) => x.status === "stale" && (wanted === undefined || x.grantId === wanted))) {
      try {
        // The level and wait as this account signed them, never as the server lists them.
        const g = await this.checked(served, "granted");
        await this.grant(g.granteeId, { level: g.level, waitHours: g.waitHours }, g.grantId);
        renewed.push(g.grantId);
      } catch (err) {
        if (!(err instanceof SecurityError)) throw err;
        stale.push(served.grantId);
      }
    }
    return { renewed, stale };
  }

  /**
   * After this account's password change, key rotation or `protect`: its grants are stale (the
   * server releases none of them) until the person makes each again (`renew`). Nothing is made
   * again here; the ids are for the person to see. The change has committed: a listing that fails
   * answers none rather than undoing nothing.
   */
  async staleAfterChange(): Promise<EmergencyRenewal> {
    try {
      const { granted } = await this.core.http.request<{ granted: ServedGrant[] }>("GET", "/emergency/grants");
      return { renewed: [], stale: granted.filter((g) => g.status === "stale").map((g) => g.grantId) };
    } catch {
      return { renewed: [], stale: [] };
    }
  }

  /** Revokes a grant you made, or declines one made to you. */
  async remove(grantId: string): Promise<void> {
    const id = grantId.toLowerCase();
    await this.core.http.request("DELETE", `/emergency/grants/${encodeURIComponent(id)}`);
    // Remembered: a server that lists it again (to have it made again, or opened) is caught.
    await this.core.rosterHeads.set(removedKey(id), { seq: 1, hash: id });
  }

  /** Asks for access granted to you: the wait starts (its grantor sees the request, and may refuse it). */
  async request(grantId: string): Promise<EmergencyGrant> {
    const served = await this.core.http.request<ServedGrant>(
      "POST",
      `/emergency/grants/${encodeURIComponent(grantId.toLowerCase())}/request`,
      { body: {} },
    );
    return this.checked(served, "received");
  }

  /** Refuses a request for access you granted: the grant stays, idle again. */
  async refuse(grantId: string): Promise<EmergencyGrant> {
    const served = await this.core.http.request<ServedGrant>(
      "POST",
      `/emergency/grants/${encodeURIComponent(grantId.toLowerCase())}/refuse`,
      { body: {} },
    );
    return this.checked(served, "granted");
  }

  /**
   * Once the wait is over: the grant checked against its grantor's signature and naming you with
   * your own keys, its key opened with yours, and the grantor's keys opened with it and compared
   * with the ones this device knows for the grantor (anything else is `EMERGENCY_TAMPERED`).
   * Take the answer up in a fresh client (`VaultClient.takeUpEmergency`).
   */
  async open(grantId: string): Promise<EmergencyRelease> {
    const keys = this.core.requireKeys();
    const res = await this.core.http.request<LoginAnswer & { grant: ServedGrant; wrappedKey: string; email: string }>(
      "POST",
      `/emergency/grants/${encodeURIComponent(grantId.toLowerCase())}/session`,
      { body: { deviceName: `Emergency access (${this.core.account.email})` } },
    );
    const grant = await this.checked(res.grant, "received");
    // The grantor as this device verified them, at their keys now: not a first sight, nor an older state.
    const { trust } = await this.trust.fingerprint(grant.grantorId);
    if (!trust || !VERIFIED.has(trust))
      throw new SecurityError(
        "EMERGENCY_GRANTOR_UNVERIFIED",
        `${grant.email}'s keys are known here only as the server showed them: compare fingerprints with them (trust them) before opening their account`,
        grant.grantorId,
      );
    if (res.grant.keys !== (await keyFingerprint(await this.trust.userKeys(grant.grantorId))))
      throw tampered("this grant was made under keys its grantor has since replaced", grant.grantorId);
    if ((res.kdfStatement?.version ?? 1) !== res.grant.kdfVersion)
      throw tampered("this grant was made under another password than the account's", grant.grantorId);
    if ((await grantStatementOf({ ...res.grant, wrappedKey: res.wrappedKey })).wrapped !== res.grant.wrapped)
      throw tampered("the released key is not the one its grantor signed", grant.grantorId);
    if (res.userId !== grant.grantorId || res.email !== grant.email)
      throw tampered("the server opens another account than the one that granted you access", grant.grantorId);
    if ((await keyFingerprint(res)) !== res.grant.keys)
      throw tampered("the account's keys are not the ones its grant names", grant.grantorId);
    let stretchedKey: Uint8Array<ArrayBuffer>;
    try {
      stretchedKey = await rsaOaepUnwrap(keys.rsaPrivateKey, fromBase64(res.wrappedKey));
      await openAccountKeys(stretchedKey, res);
    } catch {
      throw tampered("the released key does not open the account's keys", grant.grantorId);
    }
    const { grant: _g, wrappedKey: _w, email: _e, ...login } = res;
    // A read grant's session has no refresh token: it is opened again when it expires.
    return {
      grantId: grant.grantId,
      level: grant.level,
      grantor: { userId: grant.grantorId, email: grant.email },
      login: { ...login, refreshToken: login.refreshToken ?? "" },
      stretchedKey,
      kdf: res.kdf,
    };
  }

  /**
   * A served grant checked: signed by its grantor (this account's key, or the grantor's as pinned
   * here, followed through the verified key log for a grant made under earlier keys), naming this
   * account on its side, and for one made to you, your own keys.
   */
  private async checked(g: ServedGrant, side: "granted" | "received"): Promise<EmergencyGrant> {
    const me = this.core.account.userId;
    if (await this.core.rosterHeads.get(removedKey(g.grantId)))
      throw tampered("the server lists a grant you revoked or declined on this device", g.grantorId);
    if ((side === "granted" ? g.grantorId : g.granteeId) !== me)
      throw tampered(`the server lists a grant that does not name you as its ${side === "granted" ? "grantor" : "grantee"}`);
    const signer = await this.signerOf(g.grantorId, g.keys);
    if (!(await statementVerifies(grantBytes(grantStatement(g)), signer, g.signature)))
      throw tampered("this emergency access grant is not the one its grantor signed", g.grantorId);
    const other = side === "granted" ? g.granteeId : g.grantorId;
    const { email } = await this.trust.userKeys(other);
    if (side === "received" && g.status !== "stale" && g.granteeKeys !== (await keyFingerprint(this.core.account)))
      throw tampered("this grant is wrapped to other keys than yours", g.grantorId);
    return {
      grantId: g.grantId,
      grantorId: g.grantorId,
      granteeId: g.granteeId,
      email,
      level: g.level,
      waitHours: g.waitHours,
      status: g.status,
      ...(g.requestedAt !== undefined && { requestedAt: g.requestedAt }),
      ...(g.availableAt !== undefined && { availableAt: g.availableAt }),
      ...(g.refusedAt !== undefined && { refusedAt: g.refusedAt }),
      ...(g.openedAt !== undefined && { openedAt: g.openedAt }),
    };
  }

  /** The signing key the grantor had under `keys`: this account's own, or another's as pinned here (through its verified key log). */
  private async signerOf(grantorId: string, keys: string): Promise<string> {
    if (grantorId === this.core.account.userId) {
      const own = this.core.account;
      return keys === (await keyFingerprint(own))
        ? own.signingPublicKey
        : (await this.trust.signerKeysOf(grantorId, keys)).signingPublicKey;
    }
    return (await this.trust.signerKeysOf(grantorId, keys)).signingPublicKey;
  }
}
