const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `<positive integer><s|m|h|d>` to milliseconds; null when it is not of that form. */
export function parseDuration(text: string): number | null {
  const m = /^([1-9][0-9]{0,9})([smhd])$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}
