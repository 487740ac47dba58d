/**
 * The signed-in pages, one row each: the route (`#/<path>`), its link in the main navigation, the
 * page, and who may see it. The navigation, the guard and the page shown all read this table.
 */
import type { VNode } from "preact";
import { Vaults } from "./pages/vaults";
import { VaultPage } from "./pages/vault";
import { Invites } from "./pages/invites";
import { Audit } from "./pages/audit";
import { People } from "./pages/people";
import { OwnKey } from "./pages/your-key";
import { Sessions } from "./pages/sessions";
import { ChangePassword } from "./pages/password";
import { Security } from "./pages/security";
import { Health } from "./pages/health";
import { ItemsPage } from "./pages/items";
import { AllTrash } from "./pages/trash";
import { OpenSendPage, SendsPage } from "./pages/send/lazy";
import { EmergencyPage } from "./pages/emergency/lazy";

export interface Route {
  /** The route's first part: `#/<path>/<arg>/<sub>`. */
  path: string;
  /** Its link in the main navigation, in the table's order; none for a page reached from another. */
  label?: string;
  /** Only the organization's owners and admins see it (the server refuses the others anyway). */
  adminsOnly?: true;
  /** The page, or null when the route lacks what it needs (the vault list shows instead). */
  page(arg?: string, sub?: string): VNode | null;
}

export const ROUTES: readonly Route[] = [
  // Keyed: each list starts with its own empty search.
  { path: "items", page: (kind, arg) => <ItemsPage key={`${kind}/${arg}`} kind={kind} arg={arg} /> },
  // Linked from the sidebar's "Vaults" heading.
  { path: "vaults", page: () => <Vaults /> },
  { path: "vault", page: (vaultId, sub) => (vaultId ? <VaultPage vaultId={vaultId} sub={sub} /> : null) },
  { path: "trash", label: "Trash", page: () => <AllTrash /> },
  { path: "health", label: "Health", page: () => <Health /> },
  { path: "sends", label: "Sends", page: () => <SendsPage /> },
  // A send's link opened while signed in (main.tsx opens it for anyone else): the session is not used.
  { path: "send", page: (sendId = "", secret = "") => <OpenSendPage key={`${sendId}/${secret}`} sendId={sendId} secret={secret} /> },
  { path: "invites", label: "Invites", adminsOnly: true, page: () => <Invites /> },
  { path: "audit", label: "Audit log", adminsOnly: true, page: () => <Audit /> },
  { path: "people", label: "People", adminsOnly: true, page: () => <People /> },
  { path: "key", label: "Your key", page: () => <OwnKey /> },
  { path: "sessions", label: "Sessions", page: () => <Sessions /> },
  { path: "password", label: "Password", page: () => <ChangePassword /> },
  { path: "security", label: "Security", page: () => <Security /> },
  { path: "emergency", label: "Emergency access", page: () => <EmergencyPage /> },
];

export const findRoute = (path: string): Route | undefined => ROUTES.find((r) => r.path === path);

/** Whether someone sees a route: an admin sees every one, anyone else those not for admins only. */
export const mayView = (route: Route, admin: boolean): boolean => admin || !route.adminsOnly;

/** The page for `#/<path>/<arg>/<sub>`: the vault list for a route unknown, not for this user, or lacking its argument. */
export function pageFor(path: string, admin: boolean, arg?: string, sub?: string): VNode {
  const route = findRoute(path);
  return (route && mayView(route, admin) && route.page(arg, sub)) || <Vaults />;
}
