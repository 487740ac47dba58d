/** What account recovery's answers show each party: the owner, a trustee, the recovering device. */
import { recoveryStatusAt, type RecoveryEnrolment, type RecoveryRequest, type StoredEnrolment } from "./recovery";
import type { KeyBundle } from "./keys";
import type { Kdf, SignedStatement } from "../types";

/** A request as its owner and its trustees see it (`approvedBy`: the trustees who approved). */
export const requestSummary = (r: RecoveryRequest, now: string, approvedBy?: string[]) => ({
  requestId: r.requestId,
  userId: r.userId,
  publicKey: r.publicKey,
  status: recoveryStatusAt(r, now),
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
  ...(r.endedAt && { endedAt: r.endedAt }),
  ...(approvedBy && { approvedBy }),
});

/** An enrolment as its owner sees it. */
/** A versioned enrolment's signed version and account state (absent for one made before versions). */
const versionOf = (e: Pick<RecoveryEnrolment, "version" | "keys" | "kdfVersion">) =>
  e.version === undefined ? {} : { version: e.version, keys: e.keys, kdfVersion: e.kdfVersion };

export function enrolmentView(
  e: Pick<
    RecoveryEnrolment,
    "enrolmentId" | "userId" | "threshold" | "copy" | "signature" | "createdAt" | "version" | "keys" | "kdfVersion"
  >,
  shares: ReadonlyArray<{ trusteeId: string; encryptedShare: string; trusteeKeys: string }>,
) {
  return {
    enrolmentId: e.enrolmentId,
    userId: e.userId,
    threshold: e.threshold,
    copy: e.copy,
    signature: e.signature,
    createdAt: e.createdAt,
    ...versionOf(e),
    shares: shares.map((s) => ({ trusteeId: s.trusteeId, encryptedShare: s.encryptedShare, trusteeKeys: s.trusteeKeys })),
  };
}

/** What a trustee is shown of the enrolment a request is for. */
export const taskView = ({ enrolment: e, shares }: StoredEnrolment) => ({
  enrolment: {
    enrolmentId: e.enrolmentId,
    threshold: e.threshold,
    copy: e.copy,
    signature: e.signature,
    createdAt: e.createdAt,
    ...versionOf(e),
  },
  trustees: shares.map((s) => ({ trusteeId: s.trusteeId, trusteeKeys: s.trusteeKeys, encryptedShare: s.encryptedShare })),
});

/** The account as a recovering device opens it, once `decideRecoveryState` discloses it. */
export interface RecoveredAccount extends KeyBundle {
  userId: string;
  email: string;
  accountVersion: number;
  kdf: Kdf;
  kdfStatement?: SignedStatement;
}

/** What a request with k approvals lets its device open: the sealed copy, and the account's sealed keys. */
export const sealedAccount = (user: RecoveredAccount, e: Pick<RecoveryEnrolment, "enrolmentId" | "copy">) => ({
  userId: user.userId,
  enrolmentId: e.enrolmentId,
  copy: e.copy,
  email: user.email,
  accountVersion: user.accountVersion,
  kdf: user.kdf,
  ...(user.kdfStatement && { kdfStatement: user.kdfStatement }),
  publicKey: user.publicKey,
  signingPublicKey: user.signingPublicKey,
  publicKeySignature: user.publicKeySignature,
  encryptedPrivateKey: user.encryptedPrivateKey,
  encryptedSigningPrivateKey: user.encryptedSigningPrivateKey,
});
