/**
 * Which relying party a page may speak for, decided as browsers decide it (WebAuthn Level 3 §5.1.3
 * and §5.1.4, HTML's "is a registrable domain suffix of or is equal to"):
 *
 * - the page must be a secure context: `https:`, or `http:` on `localhost` (and its subdomains);
 * - its host must be a domain: an IP address cannot use WebAuthn;
 * - the relying party id is the page's host when the site names none; one it names must be the
 *   host itself, or a suffix of it at a label boundary that is not a public suffix (the Public
 *   Suffix List with its private part: `a.github.io` may not claim `github.io`, nor `login.bank.com`
 *   claim `com`).
 *
 * A page that fails gets a named `PasskeyError` and no passkey is listed, made or used for it.
 */
import { getDomain } from "tldts";
import { PasskeyError } from "./errors";

const PSL = { allowPrivateDomains: true } as const;

const isLocalhost = (host: string): boolean => host === "localhost" || host.endsWith(".localhost");
const isIpAddress = (host: string): boolean => host.startsWith("[") || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);

/** The page's origin, parsed, or `INSECURE_ORIGIN`/`NOT_A_DOMAIN`. */
function pageHost(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new PasskeyError("INSECURE_ORIGIN", "the page's origin is not an address");
  }
  const host = url.hostname.replace(/\.$/, "");
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLocalhost(host)))
    throw new PasskeyError("INSECURE_ORIGIN", `passkeys work only on https pages, not on ${url.protocol}//${host}`);
  if (isIpAddress(host)) throw new PasskeyError("NOT_A_DOMAIN", `passkeys need a domain name, not the address ${host}`);
  return host;
}

/** A relying party id as URL parsing writes a host (lower case, punycode), or `RP_ID_MISMATCH` for text that is none. */
function canonicalRpId(rpId: string): string {
  if (rpId === "" || /[/:@?#\s]/.test(rpId)) throw new PasskeyError("RP_ID_MISMATCH", `"${rpId}" is not a domain`);
  try {
    return new URL(`https://${rpId}`).hostname;
  } catch {
    throw new PasskeyError("RP_ID_MISMATCH", `"${rpId}" is not a domain`);
  }
}

/**
 * The relying party id a page at `origin` speaks for: `requested` when it may claim it, the page's
 * own host when it names none. Throws `PasskeyError` (`INSECURE_ORIGIN`, `NOT_A_DOMAIN`,
 * `RP_ID_MISMATCH`) otherwise.
 */
export function relyingPartyFor(origin: string, requested?: string): string {
  const host = pageHost(origin);
  if (requested === undefined) return host;
  const rpId = canonicalRpId(requested);
  if (rpId === host) return rpId;
  if (!host.endsWith(`.${rpId}`)) throw new PasskeyError("RP_ID_MISMATCH", `a page on ${host} may not use passkeys of ${rpId}`);
  if (getDomain(rpId, PSL) === null) throw new PasskeyError("RP_ID_MISMATCH", `${rpId} is a public suffix: no site may claim it`);
  return rpId;
}
