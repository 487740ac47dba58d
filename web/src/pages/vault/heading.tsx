/** The top of a vault's page: its name as its signed roster vouches for it, what it is, and its fingerprint. */
import type { CheckedVault } from "../../../../sdk";
import { NameFlag } from "../../components/name-flag";

export function VaultHeading({ vault, signed, fingerprint }: { vault: CheckedVault; signed: boolean; fingerprint: string | null }) {
  return (
    <>
      <p>
        <a href="#/vaults">← All vaults</a>
      </p>
      <h1>
        {vault.nameCheck.name} <NameFlag check={vault.nameCheck} />
      </h1>
      <p class="meta">
        {vault.vaultType} vault · your role: {vault.role} · key version {vault.keyVersion}
        {signed ? " · signed member and item history verified" : ""}
      </p>
      {fingerprint && (
        <p class="meta" data-testid="vault-fingerprint">
          Fingerprint <code>{fingerprint}</code>: another member who reads you the same one sees the same history of this vault.
        </p>
      )}
    </>
  );
}
