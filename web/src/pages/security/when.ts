/** A moment as the Security page shows it: in the browser's locale and time zone. */
export const when = (iso: string) => new Date(iso).toLocaleString();
