/**
 * The client's address for rate limits. Without trusted proxies, the socket's peer. Behind
 * `hops` proxies that each append the address they received the request from to
 * `X-Forwarded-For`, the client is the entry `hops` places from the right: the entries further
 * left were written by whoever sent the request, client included, and prove nothing.
 */
import net from "node:net";

export function clientAddress(socketAddress: string, forwardedFor: string | string[] | undefined, hops: number): string {
  if (hops <= 0 || forwardedFor === undefined) return socketAddress;
  const entries = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  const entry = entries[entries.length - hops];
  // Fewer entries than trusted proxies, or not an address: the request did not come the way it should.
  return entry !== undefined && net.isIP(entry) !== 0 ? entry : socketAddress;
}
