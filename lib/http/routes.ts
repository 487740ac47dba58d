/**
 * Every route the gateway serves, relative to /api/v1: exactly the routes of the interface and
 * the contract, nothing else. `public` routes need no access token.
 */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteDef {
  method: Method;
  path: string;
  action: string;
  public?: boolean;
  /**
   * The JSON body is streamed to the action, which reads it (up to the rekey body limit): it can be
   * far larger than the 1 MiB of other routes and than one NATS message.
   */
  streamBody?: boolean;
}

export const API_PREFIX = "/api/v1";

export const ROUTES: readonly RouteDef[] = [
  { method: "GET", path: "/health", action: "api.health", public: true },

  { method: "GET", path: "/auth/prelogin", action: "auth.prelogin", public: true },
  { method: "POST", path: "/auth/register", action: "auth.register", public: true },
  { method: "POST", path: "/auth/login", action: "auth.login", public: true },
  { method: "POST", path: "/auth/refresh", action: "auth.refresh", public: true },
  { method: "POST", path: "/auth/logout", action: "auth.logout" },

  { method: "GET", path: "/users/me", action: "users.me" },
  { method: "GET", path: "/users/:userId/keys", action: "users.keys" },
  { method: "GET", path: "/orgs/:orgId", action: "orgs.get" },
  { method: "GET", path: "/orgs/:orgId/members", action: "orgs.members" },

  { method: "GET", path: "/vaults", action: "vaults.list" },
  { method: "POST", path: "/vaults", action: "vaults.create" },
  { method: "GET", path: "/vaults/:vaultId", action: "vaults.get" },
  { method: "PATCH", path: "/vaults/:vaultId", action: "vaults.rename" },
  { method: "DELETE", path: "/vaults/:vaultId", action: "vaults.remove" },

  { method: "GET", path: "/vaults/:vaultId/members", action: "members.list" },
  { method: "POST", path: "/vaults/:vaultId/members", action: "members.add" },
  { method: "PATCH", path: "/vaults/:vaultId/members/:userId", action: "members.changeRole" },
  { method: "DELETE", path: "/vaults/:vaultId/members/:userId", action: "members.remove" },
  { method: "GET", path: "/vaults/:vaultId/roster", action: "members.roster" },
  { method: "POST", path: "/vaults/:vaultId/roster", action: "members.adoptRoster" },

  { method: "POST", path: "/vaults/:vaultId/rekey", action: "rekey.rekey", streamBody: true },

  { method: "GET", path: "/vaults/:vaultId/items", action: "items.list" },
  { method: "POST", path: "/vaults/:vaultId/items", action: "items.create" },
  { method: "GET", path: "/vaults/:vaultId/items/:itemId", action: "items.get" },
  { method: "PUT", path: "/vaults/:vaultId/items/:itemId", action: "items.update" },
  { method: "DELETE", path: "/vaults/:vaultId/items/:itemId", action: "items.remove" },

  { method: "POST", path: "/invites", action: "invites.create" },
  { method: "GET", path: "/invites", action: "invites.list" },
  { method: "POST", path: "/invites/redeem", action: "invites.redeem", public: true },
  { method: "DELETE", path: "/invites/:inviteId", action: "invites.revoke" },

  { method: "GET", path: "/audit", action: "audit.list" },
  { method: "GET", path: "/audit/verify", action: "audit.verify" },
];

/** The methods declared for a path under API_PREFIX (`/api/v1/vaults/abc` -> GET, PATCH, DELETE), none for an unknown one. */
export function methodsForPath(pathname: string): Method[] {
  if (!pathname.startsWith(`${API_PREFIX}/`)) return [];
  const path = pathname.slice(API_PREFIX.length).replace(/\/+$/, "");
  const parts = path.split("/");
  return ROUTES.filter((r) => {
    const pattern = r.path.split("/");
    return pattern.length === parts.length && pattern.every((p, i) => (p.startsWith(":") ? parts[i] !== "" : p === parts[i]));
  }).map((r) => r.method);
}
