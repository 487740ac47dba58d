/** An organization as a request reads it. */
import { orgNotFound } from "./refusals";

/** The organization a request names, read: `404` when it is gone. */
export function requireOrg<T>(org: T | null | undefined): T {
  if (!org) throw orgNotFound();
  return org;
}
