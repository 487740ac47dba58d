/**
 * Other users' keys, and how far this device trusts them: every served bundle is checked on its
 * own, against the roster's record, the pins and the invite binding, before it is used or pinned.
 * Why, and the checks in order: docs/design/key-trust.md.
 */
import { fromBase64, toBase64 } from "../../../protocol/encoding";
import { ApiError, SecurityError } from "../../errors";
import { groupedFingerprint, keyFingerprint, type PublicKeyBundle } from "../../../protocol/crypto/keys";
import { asPin, type Pin, type PinSource } from "../../pins";
import { inviteBindingVerifies } from "../../../protocol/formats/statements";
import { bundleOfEntry, KeyLogError, verifyKeyLog, type VerifiedKeyEntry } from "../../../protocol/formats/key-log";
import { SerialQueue, type ClientCore } from "../core";
import type { CheckedMember, OrgMember, OrgRole, ServedBundle, TrustLevel } from "../types";
import { emailOrNull, selfConsistent } from "./bundle";
import { checkAgainstPins, keyChanged, type PinIndex } from "./pin-checks";
import { followKeyLogFrom, pinFollowingRecord, placeInLog } from "./key-log";
import { emailCounts, memberNamed, ownOrShared } from "./org-members";

export class Trust {
  /** Pin checks and writes run one at a time: two checks of one new user never both pin. */
  private readonly pinChecks = new SerialQueue();

  constructor(private readonly core: ClientCore) {}

  /** A user's public keys, checked (`checkBundle`) and pinned; `recordedKey`, the fingerprint a signed roster recorded for them. */
  async userKeys(userId: string, recordedKey?: string): Promise<ServedBundle> {
    const bundle = await this.served(userId);
    await this.checkBundle(bundle, userId, recordedKey);
    return bundle;
  }

  /** The server's answer for a user's keys, unchecked (ids come lowered, as the server keeps them: the facade lowers what callers pass). */
  private served(userId: string): Promise<ServedBundle> {
    return this.core.http.request<ServedBundle>("GET", `/users/${encodeURIComponent(userId)}/keys`);
  }

  /**
   * The keys a signature was made with, `recordedKey` as a signed roster recorded them for the
   * signer: the current keys, or keys the user had before, reached through their verified key log
   * from the current ones (links and items signed before a rotation). Never for encrypting to:
   * that is `keysOf`, which takes the current keys only.
   */
  async signerKeysOf(userId: string, recordedKey: string): Promise<Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">> {
    const own = userId === this.core.account.userId;
    const served = own ? undefined : await this.served(userId);
    const current = own ? this.ownKeys() : served!;
    const currentKeys = own ? await keyFingerprint(current) : (await selfConsistent(served!, userId)).keys;
    if (currentKeys === recordedKey) return this.keysOf(userId, recordedKey);
    // Keys the roster recorded before a rotation: the verified log leads from them to the current keys, or nothing is taken up.
    const log = await this.verifiedKeyLog(userId);
    const at = log.findIndex((e) => e.keys === recordedKey);
    if (at < 0 || log[log.length - 1]!.keys !== currentKeys || at === log.length - 1)
      throw new SecurityError(
        "KEY_CHANGED",
        `the keys the server shows for ${userId} are not the ones the vault's signed roster recorded for them, and no signed step of their key log leads from those to these`,
        userId,
      );
    // The current keys are vouched for by the recorded ones: checked against the pins (and followed, or pinned) as any bundle is.
    if (own) {
      if (!this.core.keys) await this.checkOwnPin(current);
    } else await this.checkBundle(served!, userId);
    return bundleOfEntry(log[at]!.entry);
  }

  /** A user's key log as the server serves it, verified on its own (`KEY_LOG_BROKEN`): each step signed by the key before it and its own. */
  async verifiedKeyLog(userId: string, served?: unknown): Promise<VerifiedKeyEntry[]> {
    const raw =
      served ?? (await this.core.http.request<{ entries: unknown }>("GET", `/users/${encodeURIComponent(userId)}/key-log`)).entries;
    try {
      return await verifyKeyLog(userId, raw);
    } catch (err) {
      if (err instanceof KeyLogError) throw new SecurityError("KEY_LOG_BROKEN", err.message, userId);
      throw err;
    }
  }

  /**
   * Follows a user's key log from the keys this device pinned to the keys the server shows now
   * (`shownKeys`, hex): the pinned keys must be in the verified log, never past a version this
   * device followed to (`KEY_LOG_ROLLBACK`) nor with another entry there (`KEY_LOG_FORK`), and the
   * shown keys its last entry, after them. No such signed path: `KEY_CHANGED`, as before key logs.
   * Answers the pin to keep.
   */
  async followKeyLog(userId: string, email: string, pin: Pin, shownKeys: string, served?: unknown): Promise<Pin> {
    return followKeyLogFrom(await this.verifiedKeyLog(userId, served), { userId, email }, pin, shownKeys);
  }

  /** The key-log version this device followed its own account to (1: the registered keys). */
  async ownKeyLogVersion(userId: string): Promise<number> {
    const kept = await this.core.pins.get(userId);
    return (kept === undefined ? undefined : asPin(kept).keyVersion) ?? 1;
  }

  /** After this device rotated the account's keys: its own pin moves to them, at the log entry it made. */
  pinOwnRotation(userId: string, email: string, keysHex: string, keyVersion: number, keyHash: string): Promise<void> {
    return this.pinChecks.run(async () => {
      const kept = await this.core.pins.get(userId);
      const pin = kept === undefined ? undefined : asPin(kept);
      await this.core.pins.set(userId, {
        ...pin,
        fingerprint: groupedFingerprint(keysHex),
        email,
        via: pin?.via ?? "first-use",
        stated: true,
        keyVersion,
        keyHash,
      });
    });
  }

  /** One's own public keys: the unlocked ones, or (locked) the login's copy. */
  private ownKeys(): Pick<PublicKeyBundle, "publicKey" | "signingPublicKey"> {
    const { core } = this;
    return core.keys
      ? { publicKey: toBase64(core.keys.publicKeyDer), signingPublicKey: toBase64(core.keys.signingPublicKeyRaw) }
      : { publicKey: core.account.publicKey, signingPublicKey: core.account.signingPublicKey };
  }

  /**
   * One's own bundle comes from the unlocked keys (or, locked, the login's copy, checked against
   * its pin); anyone else's through the checked lookup. The current keys only: what is wrapped
   * to a member goes to these.
   */
  async keysOf(userId: string, recordedKey?: string): Promise<Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">> {
    const { core } = this;
    const own = this.ownKeys();
    if (userId !== core.account.userId) return this.userKeys(userId, recordedKey);
    if (recordedKey !== undefined && (await keyFingerprint(own)) !== recordedKey)
      throw new SecurityError("KEY_CHANGED", "your own keys are not the ones the vault's signed roster recorded for you", userId);
    if (!core.keys) await this.checkOwnPin(own);
    return own;
  }

  /** One's own keys against their pin (pinned at the first login on this device); `who`, the account they belong to (the logged-in one by default). */
  checkOwnPin(
    own: Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">,
    who: { userId: string; email: string } = this.core.account,
    /** The log a login answered, before this client holds tokens (`null`: none, never rotated); undefined: asked for. */
    servedLog?: unknown,
  ): Promise<void> {
    return this.pinChecks.run(async () => {
      const { userId, email } = who;
      const keys = await keyFingerprint(own);
      const fingerprint = groupedFingerprint(keys);
      const kept = await this.core.pins.get(userId);
      // A login's log places the keys in the account's history, so that a later log cut short or forked is caught.
      const at: Partial<Pin> = servedLog ? placeInLog(await this.verifiedKeyLog(userId, servedLog), userId, keys) : {};
      if (kept === undefined) return this.core.pins.set(userId, { fingerprint, email, via: "first-use", ...at });
      let pin = asPin(kept);
      if (pin.fingerprint !== fingerprint) {
        if (servedLog === null) throw keyChanged(userId, email, pin.fingerprint, fingerprint);
        pin = await this.followKeyLog(userId, email, pin, keys, servedLog);
      } else if (pin.keyVersion === undefined && at.keyVersion !== undefined) pin = { ...pin, ...at };
      if (pin !== kept || pin.email === undefined) await this.core.pins.set(userId, { ...pin, email });
    });
  }

  /** One's own key log as a rotation is about to extend it: as the pin followed it (not cut short, not forked). */
  async checkOwnLog(log: readonly VerifiedKeyEntry[]): Promise<void> {
    const { userId, email } = this.core.account;
    const kept = await this.core.pins.get(userId);
    if (kept === undefined) return;
    followKeyLogFrom(log, { userId, email }, asPin(kept), log[log.length - 1]!.keys);
  }

  /**
   * The checks every bundle passes before its keys are used or its email shown (docs/design/key-trust.md);
   * pins it on first contact, and completes an older pin (email, statement seen).
   */
  checkBundle(bundle: ServedBundle, expectedUserId?: string, recordedKey?: string): Promise<TrustLevel> {
    return this.pinChecks.run(async () => this.checkAndPin(bundle, await this.pinIndex(), expectedUserId, recordedKey));
  }

  /** `checkBundle`'s work, inside the queue, against a pin index read inside it. */
  private async checkAndPin(bundle: ServedBundle, pins: PinIndex, expectedUserId?: string, recordedKey?: string): Promise<TrustLevel> {
    const { userId, email, keys, fingerprint } = await selfConsistent(bundle, expectedUserId);
    if (recordedKey !== undefined && keys !== recordedKey)
      throw new SecurityError(
        "KEY_CHANGED",
        `the keys the server shows for ${email} are not the ones the vault's signed roster recorded`,
        userId,
      );
    const statement = bundle.keyStatement;
    let pinned = pins.byUser.get(userId);
    // New keys for a pinned user: taken up only through their signed key log, from the pinned keys.
    if (pinned && pinned.fingerprint !== fingerprint) pinned = await this.followKeyLog(userId, email, pinned, keys);
    checkAgainstPins(pins, { userId, email, fingerprint, stated: statement !== undefined }, pinned);
    let via: PinSource = pinned?.via ?? "first-use";
    if (via === "first-use") {
      const invited = await this.core.inviteSecrets.get(email);
      if (invited) {
        const binding = bundle.inviteBinding;
        const vouched =
          statement !== undefined &&
          binding?.inviteId === invited.inviteId &&
          (await inviteBindingVerifies(fromBase64(invited.secret), { userId, email, keys, version: statement.version }, binding.mac));
        if (!vouched)
          throw new SecurityError(
            "INVITE_BINDING_MISMATCH",
            `the keys the server shows for ${email} (${fingerprint}) are not the ones your invite link vouches for: whoever registered them did not have the link you sent. Compare fingerprints with ${email} out of band before trusting them`,
            userId,
          );
        via = "invite";
      }
    }
    await this.pin(pins, userId, {
      fingerprint,
      email,
      via,
      ...((statement || pinned?.stated) && { stated: true }),
      ...(pinned?.keyVersion !== undefined && { keyVersion: pinned.keyVersion, keyHash: pinned.keyHash }),
    });
    return via;
  }

  /**
   * A bundle that something other than the server vouches for (the inviter's key fingerprint in an
   * invite link): checked in itself and against the pins, then pinned as `via`.
   */
  pinVouched(bundle: ServedBundle, via: PinSource): Promise<void> {
    return this.pinChecks.run(async () => {
      const pins = await this.pinIndex();
      const { userId, email, fingerprint } = await selfConsistent(bundle, bundle.userId);
      checkAgainstPins(pins, { userId, email, fingerprint, stated: bundle.keyStatement !== undefined });
      await this.pin(pins, userId, { ...pins.byUser.get(userId), fingerprint, email, via, ...(bundle.keyStatement && { stated: true }) });
    });
  }

  /** Writes a pin that differs from the one kept, and the index with it. */
  private async pin(pins: PinIndex, userId: string, next: Pin): Promise<void> {
    const pinned = pins.byUser.get(userId);
    if (
      pinned &&
      pinned.fingerprint === next.fingerprint &&
      pinned.email === next.email &&
      pinned.via === next.via &&
      pinned.stated === next.stated &&
      pinned.keyVersion === next.keyVersion &&
      pinned.keyHash === next.keyHash
    )
      return;
    await this.core.pins.set(userId, next);
    pins.byUser.set(userId, next);
    if (next.email !== undefined) pins.userOfEmail.set(next.email, userId);
  }

  private async pinIndex(): Promise<PinIndex> {
    const byUser = new Map<string, Pin>();
    const userOfEmail = new Map<string, string>();
    for (const [userId, kept] of await this.core.pins.entries()) {
      const pin = asPin(kept);
      byUser.set(userId, pin);
      if (pin.email !== undefined) userOfEmail.set(pin.email, userId);
    }
    return { byUser, userOfEmail };
  }

  /**
   * The fingerprint the server currently shows for a user (consistent in itself: self-signed, its
   * statement verifying, but not yet checked against the pins), and the pinned one with its source.
   */
  async fingerprint(userId: string): Promise<{ current: string; pinned?: string; email: string; trust?: TrustLevel }> {
    const bundle = await this.served(userId);
    const { fingerprint } = await selfConsistent(bundle, userId);
    const kept = await this.core.pins.get(userId);
    const pin = kept === undefined ? undefined : asPin(kept);
    return { current: fingerprint, pinned: pin?.fingerprint, email: bundle.email, trust: pin?.via };
  }

  /**
   * Accepts a user's keys as they are now, under the email the person checking was shown: call
   * only after comparing the fingerprint with them out of band. The server's answer must be that
   * fingerprint under that very email (it could otherwise slip another address in between).
   */
  async trustUser(id: string, fingerprint: string, email: string): Promise<void> {
    const checkedEmail = emailOrNull(email);
    if (checkedEmail === null) throw new ApiError(400, "INVALID", `${email} is not an email address`, "email");
    const bundle = await this.served(id);
    const { fingerprint: current } = await selfConsistent(bundle, id);
    if (current !== fingerprint)
      throw new SecurityError("KEY_CHANGED", `the server now shows ${current}, not the fingerprint you checked`, id);
    if (bundle.email !== checkedEmail)
      throw new SecurityError(
        "IDENTITY_MISMATCH",
        `the server now shows these keys under ${bundle.email}, not ${checkedEmail} as you checked`,
        id,
      );
    await this.pinChecks.run(async () => {
      // Whoever else this device had pinned under this email loses it: the person checked is the one it belongs to.
      for (const [other, kept] of await this.core.pins.entries()) {
        const pin = asPin(kept);
        if (other !== id && pin.email === checkedEmail) await this.core.pins.set(other, { ...pin, email: undefined });
      }
      // The keys checked are the ones trusted, with or without a statement (a statement seen for older keys says nothing of these).
      await this.core.pins.set(id, {
        fingerprint: current,
        email: checkedEmail,
        via: "checked",
        ...(bundle.keyStatement && { stated: true }),
      });
    });
  }

  /**
   * The keys a verified roster recorded for its members: a member this device has not pinned yet
   * is pinned with them (their email is completed by the first bundle that agrees), so that a
   * later lookup showing other keys for them is refused (`KEY_CHANGED`) rather than trusted on
   * first use. A member pinned already keeps their pin: every use of their keys for this vault is
   * checked against the roster's record anyway.
   */
  pinRecorded(members: ReadonlyMap<string, { key: string }>): Promise<void> {
    return this.pinChecks.run(async () => {
      // The pins are read once per roster (this runs at every verification), not once per member.
      const pins = await this.pinIndex();
      for (const [userId, { key }] of members) {
        const pinned = pins.byUser.get(userId);
        if (!pinned) await this.pin(pins, userId, { fingerprint: groupedFingerprint(key), via: "first-use" });
        else if (pinned.fingerprint !== groupedFingerprint(key) && userId !== this.core.account.userId)
          await this.followRecorded(pins, userId, pinned, key);
      }
    });
  }

  /** A member the roster records at other keys than the pin: the pin follows their log (`pinFollowingRecord`), or stays. */
  private async followRecorded(pins: PinIndex, userId: string, pinned: Pin, recordedKey: string): Promise<void> {
    const log = await this.verifiedKeyLog(userId).catch((err: unknown) => {
      if (err instanceof SecurityError) return undefined;
      throw err;
    });
    const next = log && pinFollowingRecord(log, userId, pinned, recordedKey);
    if (next) await this.pin(pins, userId, next);
  }

  /**
   * The organization's people, each bundle checked as `checkBundle` does (the caller's own entry
   * against the caller's own keys and email); one that fails carries its `problem` rather than
   * failing the list (show it by id, never share with it).
   */
  async orgMembers(): Promise<CheckedMember[]> {
    const { account } = this.core;
    const { members } = await this.core.http.request<{ members: OrgMember[] }>("GET", `/orgs/${account.orgId}/members`);
    if (!Array.isArray(members)) throw new SecurityError("INCONSISTENT", "the server's member list of your organization is not a list");
    const ownKeys = await keyFingerprint({ publicKey: account.publicKey, signingPublicKey: account.signingPublicKey });
    return this.pinChecks.run(async () => {
      const index = await this.pinIndex();
      const checked: CheckedMember[] = [];
      const sameEmail = emailCounts(members);
      for (const m of members) {
        const stated = m?.keyStatement !== undefined;
        try {
          const own = await ownOrShared(m, account, ownKeys, sameEmail);
          checked.push({ ...m, stated, trust: own ? "checked" : await this.checkAndPin(m, index) });
        } catch (err) {
          if (!(err instanceof SecurityError)) throw err;
          checked.push({ ...m, stated, problem: err });
        }
      }
      return checked;
    });
  }

  /** A user of the caller's organization by email or id, refused when the server's pairing of id, email and keys does not hold. */
  async findUser(emailOrId: string): Promise<{ userId: string; email: string; role: OrgRole; trust?: TrustLevel; stated: boolean }> {
    const found = await this.findMember(emailOrId);
    if (found.problem) throw found.problem;
    return { userId: found.userId, email: found.email, role: found.role, trust: found.trust, stated: found.stated };
  }

  /** A member of the caller's organization by email or id, with what is wrong with them if anything (to show it, or to check a changed key with them). */
  async findMember(emailOrId: string): Promise<CheckedMember> {
    return memberNamed(await this.orgMembers(), emailOrId);
  }
}
