/**
 * The client's parts, one per concern, wired once over one `ClientCore`: each takes the parts it
 * stands on. `VaultClient` (index.ts) holds them privately; callers reach them only through the
 * namespaces in api/, which lower the ids they are given.
 */
import { Attachments } from "./attachments";
import { Audit } from "./audit";
import { ClientCore, type VaultClientOptions } from "./core";
import { Exposures } from "./exposure";
import { Factors } from "./factors";
import { History } from "./history";
import { Invites } from "./invites";
import { ItemLogs } from "./item-log";
import { Items } from "./items";
import { KeyRotations } from "./keys";
import { Members } from "./members";
import { OrgLogs } from "./org-log";
import { PasskeyLogins } from "./passkey-logins";
import { PasswordChanges } from "./password";
import { People } from "./people";
import { AccountProtection } from "./protect";
import { Recovery } from "./recovery";
import { RecoveryVersions } from "./recovery-versions";
import { EmergencyAccess } from "./emergency";
import { Rekeys } from "./rekey";
import { Rosters } from "./roster";
import { Sends } from "./sends";
import { Session } from "./session";
import { Transfers } from "./transfer";
import { Trust } from "./trust";
import { Vaults } from "./vaults";
import { WrapLabels } from "./wrap-labels";

export interface Parts {
  core: ClientCore;
  session: Session;
  trust: Trust;
  orgLogs: OrgLogs;
  audit: Audit;
  invites: Invites;
  rosters: Rosters;
  vaults: Vaults;
  members: Members;
  items: Items;
  passwords: PasswordChanges;
  passkeyLogins: PasskeyLogins;
  keyRotations: KeyRotations;
  history: History;
  attachments: Attachments;
  sends: Sends;
  transfers: Transfers;
  exposures: Exposures;
  rekeys: Rekeys;
  people: People;
  factors: Factors;
  recovery: Recovery;
  emergency: EmergencyAccess;
  protection: AccountProtection;
}

/** Builds every part, each after the parts it takes. */
export function assembleParts(opts: VaultClientOptions): Parts {
  const core = new ClientCore(opts);
  const trust = new Trust(core);
  const audit = new Audit(core);
  const invites = new Invites(core, trust);
  const orgLogs = new OrgLogs(core, trust);
  const session = new Session(core, trust, invites, orgLogs);
  const rosters = new Rosters(core, trust, audit);
  const labels = new WrapLabels(core, trust);
  const vaults = new Vaults(core, trust, rosters, orgLogs, labels);
  const members = new Members(core, trust, rosters, vaults);
  const items = new Items(core, vaults, rosters, new ItemLogs(core, trust, rosters, audit));
  const passkeyLogins = new PasskeyLogins(core, session);
  const passwords = new PasswordChanges(core, trust, rosters, vaults, labels, passkeyLogins);
  const keyRotations = new KeyRotations(core, trust, rosters, vaults, members, labels, passkeyLogins);
  const history = new History(core, vaults, items);
  const attachments = new Attachments(core, items, history);
  const transfers = new Transfers(core, vaults, items, attachments);
  const sends = new Sends(core);
  const exposures = new Exposures(rosters, items, history, audit);
  const rekeys = new Rekeys(core, trust, rosters, vaults, members, items, history, labels);
  const people = new People(core, members, rekeys, orgLogs, vaults, rosters);
  const factors = new Factors(core);
  const recovery = new Recovery(core, trust, session, passwords, keyRotations);
  const emergency = new EmergencyAccess(core, trust, new RecoveryVersions(core, trust));
  const protection = new AccountProtection(core, rosters, vaults, keyRotations, rekeys);
  return {
    core,
    session,
    trust,
    orgLogs,
    audit,
    invites,
    rosters,
    vaults,
    members,
    items,
    passwords,
    passkeyLogins,
    keyRotations,
    history,
    attachments,
    sends,
    transfers,
    exposures,
    rekeys,
    people,
    factors,
    recovery,
    emergency,
    protection,
  };
}
