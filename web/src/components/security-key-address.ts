/**
 * Where security keys and passkeys work. A key is bound to the server's relying party (its host
 * name, WEBAUTHN_RP_ID), and browsers refuse WebAuthn altogether on a page opened at an IP address
 * (Chromium: "127.0.0.1 is an invalid domain"). So a page opened at http://127.0.0.1:3000/ names
 * http://localhost:3000/ instead, before the browser's own message could confuse anyone.
 */

/** What the check needs of the page's address (`window.location`). */
export interface PageAddress {
  protocol: string;
  hostname: string;
  port: string;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Whether `hostname` is an IP address (browsers give IPv6 ones in brackets). */
export function isIpAddress(hostname: string): boolean {
  return IPV4.test(hostname) || hostname.startsWith("[") || hostname.includes(":");
}

const isLoopback = (hostname: string) => /^127\./.test(hostname) || hostname === "[::1]";

/** The same page at another host name: protocol, host and port. */
const at = (page: PageAddress, host: string) => `${page.protocol}//${host}${page.port ? `:${page.port}` : ""}/`;

/**
 * The sentence to show when security keys cannot work at this page's address, or null when they
 * can. `rpId`: the relying party the server's options name, once they are known.
 */
export function securityKeyAddressProblem(page: PageAddress, rpId?: string): string | null {
  const host = page.hostname;
  const fits = rpId === undefined ? !isIpAddress(host) : host === rpId || host.endsWith(`.${rpId}`);
  if (fits) return null;
  const where = rpId ?? (isLoopback(host) ? "localhost" : undefined);
  if (where === undefined)
    return `Security keys and passkeys do not work at an IP address like ${host}: open the web vault at this server's host name.`;
  return `Security keys and passkeys work at ${at(page, where)}, not at ${host}: open the web vault there and sign in again to use one.`;
}
