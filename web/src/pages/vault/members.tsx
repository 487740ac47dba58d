/** A shared vault's members: a row each (role, removal, by the role table), sharing, and a new vault key. */
import { useState } from "preact/hooks";
import {
  mayDo,
  mayRemoveMember,
  VAULT_ROLES,
  type VaultRole,
  type CheckedMember,
  type CheckedVault,
  type MemberEntry,
} from "../../../../sdk";
import { go } from "../../session";
import { inputValue } from "../../components/ui";
import { ShareForm } from "./share";
import type { VaultState } from "./use-vault";

export type OrgMember = Pick<CheckedMember, "userId" | "email" | "problem" | "stated" | "removedAt">;

export function MembersSection({ state, vault }: { state: VaultState; vault: CheckedVault }) {
  const { members, org } = state;
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      <table>
        <caption class="visually-hidden">Members of this vault</caption>
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role</th>
            <th scope="col">Key wrapped by</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <MemberRow
              key={m.userId}
              member={m}
              email={state.email}
              myRole={vault.role}
              me={state.me}
              busy={state.act.busy}
              onRole={(role) => changeRole(state, m, role)}
              onRemove={() => remove(state, vault, m)}
            />
          ))}
        </tbody>
      </table>
      {state.may("addMember") && (
        <ShareForm
          vaultId={state.vaultId}
          candidates={org.filter((p) => !p.removedAt && !members.some((m) => m.userId === p.userId))}
          onShared={(who) => {
            state.setNotice(`Shared with ${who}.`);
            void state.reload();
          }}
          onTrusted={() => void state.reload()}
        />
      )}
      {state.may("rekey") && !vault.rekeyRequired && (
        <p>
          <button type="button" class="secondary" onClick={() => void state.rekey()} disabled={state.act.busy}>
            Rekey (new vault key)
          </button>
        </p>
      )}
    </section>
  );
}

const changeRole = (state: VaultState, m: MemberEntry, role: VaultRole) =>
  state.change(async () => {
    await state.client.members.changeRole(state.vaultId, m.userId, role);
    state.setNotice(`${state.email(m.userId)} is ${role} now.`);
  });

/** Removing a member, or leaving: the remover rekeys at once, then sees what the person could read. */
function remove(state: VaultState, vault: CheckedVault, m: MemberEntry) {
  const { email } = state;
  const self = m.userId === state.me;
  if (!confirm(self ? `Leave "${vault.vaultName}"?` : `Remove ${email(m.userId)} from "${vault.vaultName}"?`)) return;
  void state.change(async () => {
    const result = await state.client.members.remove(state.vaultId, m.userId);
    if (self) return go("#/vaults");
    state.setNotice(`${email(m.userId)} was removed.${result.rekeyRequired ? " Rekeying the vault: they still hold the old key." : ""}`);
    // The remover rekeys at once: until then nothing is written under the key they still hold.
    if (result.rekeyRequired) await state.rekeyNow();
    state.setExposureFor(m.userId);
  });
}

export function MemberRow(props: {
  member: MemberEntry;
  email(id: string): string;
  myRole: VaultRole;
  me: string;
  busy: boolean;
  onRole(role: VaultRole): void;
  onRemove(): void;
}) {
  const { member: m, email } = props;
  const [role, setRole] = useState(m.role);
  const self = m.userId === props.me;
  const mayRemove = mayRemoveMember(props.myRole, m.role, self);
  return (
    <tr>
      <td>
        {email(m.userId)}
        {self ? " (you)" : ""}
      </td>
      <td>
        {mayDo(props.myRole, "changeRole") ? (
          <>
            <label class="visually-hidden" for={`role-${m.userId}`}>
              Role of {email(m.userId)}
            </label>
            <select id={`role-${m.userId}`} value={role} onChange={(e) => setRole(inputValue(e) as typeof role)}>
              {VAULT_ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>{" "}
            {role !== m.role && (
              <button type="button" class="secondary" disabled={props.busy} onClick={() => props.onRole(role)}>
                Save role
              </button>
            )}
          </>
        ) : (
          m.role
        )}
      </td>
      <td>{email(m.senderId)}</td>
      <td>
        {mayRemove && (
          <button type="button" class="danger" disabled={props.busy} onClick={props.onRemove}>
            {self ? "Leave" : `Remove ${email(m.userId)}`}
          </button>
        )}
      </td>
    </tr>
  );
}
