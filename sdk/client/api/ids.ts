/**
 * Ids as the server stores them: lower case. Every id a caller passes is lowered in these
 * namespaces, at the boundary, and nowhere inside; what the server answers must already be so
 * (the parts refuse it otherwise).
 */
export const lc = (id: string) => id.toLowerCase();
