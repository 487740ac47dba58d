/** Beside a vault's name, on the vault list and the vault's page: nothing when its signed roster vouches for it, else why not. */
import type { NameCheck } from "../../../sdk";

export function NameFlag({ check }: { check: NameCheck }) {
  if (check.status === "verified") return null;
  if (check.status === "unverified")
    return (
      <span class="flag" title={check.why} data-testid="name-unverified">
        (name not verified)
      </span>
    );
  return (
    <span class="flag danger-text" role="alert" data-testid="name-mismatch">
      (the server calls it "{check.shown}": not what its signed history says)
    </span>
  );
}
