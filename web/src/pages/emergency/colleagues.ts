/** The colleagues the Emergency access page deals with, read once for both its sections. */
import { useEffect, useState } from "preact/hooks";
import type { CheckedMember, VaultClient } from "../../../../sdk";
import { useAction } from "../../components/ui";

/** The colleagues of this account (everyone else in the organization, not removed), with their keys as this device holds them. */
export interface Colleagues {
  people: CheckedMember[] | null;
  /** Read them again (a key just checked). */
  read(): void;
}

export function useColleagues(client: VaultClient): Colleagues & { error: string | null } {
  const [people, setPeople] = useState<CheckedMember[] | null>(null);
  const load = useAction();
  const me = client.account.userId;
  const read = () => void load.run(async () => setPeople((await client.people.list()).filter((p) => p.userId !== me && !p.removedAt)));
  useEffect(read, [client]);
  return { people, read, error: load.error };
}

/** A key this device checked (compared, or vouched for by its own invite): what a grant and its opening need, as KeyCheck shows it. */
export const keyChecked = (person: CheckedMember): boolean => !person.problem && (person.trust === "checked" || person.trust === "invite");
