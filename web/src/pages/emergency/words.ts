/** How emergency access is put in words, on its page and in the banner. */
import type { EmergencyGrant } from "../../../../sdk/client";

type Level = EmergencyGrant["level"];

/** Each level's name. */
export const LEVEL_NAME: Record<Level, string> = { read: "Read", takeover: "Take over" };

/** What each level lets the grantee do, in one line. */
export const LEVEL_EFFECT: Record<Level, string> = {
  read: "They can read your vaults and items, and change nothing.",
  takeover: "They can set a new master password and take your account over; your own sessions end.",
};

/** What a grant gives the colleague it was made to, once open. */
export const LEVEL_GIVES: Record<Level, string> = {
  read: "Once open, you can read their vaults and items, and change nothing.",
  takeover: "Once open, you set a new master password for their account, and sign in to it with that password.",
};

/** What a request would let its grantee do once open, for the grantor deciding whether to refuse. */
export const LEVEL_ASKED: Record<Level, string> = {
  read: "Once open, they could read your vaults and items.",
  takeover: "Once open, they could set a new master password and take your account over.",
};

/** A server time, as this browser shows dates. */
export const when = (iso: string | undefined): string => (iso ? new Date(iso).toLocaleString() : "(no date)");

/** A wait of whole days (the form takes days), else hours. */
export function waitWords(hours: number): string {
  const n = hours % 24 === 0 ? hours / 24 : hours;
  const unit = hours % 24 === 0 ? "day" : "hour";
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}
