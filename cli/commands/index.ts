/** Every CLI command, by group (one file each beside this one): what it takes, what it says, and the SDK calls it makes. */
import { accountCommands } from "./account";
import { auditCommands } from "./audit";
import { emergencyCommands } from "./emergency";
import { inviteCommands } from "./invites";
import { exposureCommands } from "./exposure";
import { fileCommands } from "./files";
import { findCommands } from "./find";
import { historyCommands } from "./history";
import { transferCommands } from "./transfer";
import { itemCommands } from "./items";
import { keysCommands } from "./keys";
import { orgCommands } from "./org";
import { securityCommands } from "./security";
import { sendCommands } from "./sends";
import type { Command } from "./shared";
import { vaultsCommands } from "./vaults";
import { verifyCommands } from "./verify";

export type { Command, OptionSpec } from "./shared";

export const commands: Command[] = [
  ...accountCommands,
  ...vaultsCommands,
  ...verifyCommands,
  ...auditCommands,
  ...itemCommands,
  ...fileCommands,
  ...sendCommands,
  ...historyCommands,
  ...findCommands,
  ...transferCommands,
  ...exposureCommands,
  ...inviteCommands,
  ...orgCommands,
  ...keysCommands,
  ...securityCommands,
  ...emergencyCommands,
];
