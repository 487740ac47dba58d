/**
 * "You grant": granting a colleague emergency access (a level and a wait), and the grants made,
 * each with its request. A stale grant (made under an earlier password or keys) is made again one
 * at a time, once the person confirmed it. The account's key is wrapped only to a colleague whose key this device
 * checked (the SDK refuses any other): the chosen colleague's key shows below the form with the
 * comparison that checks it (KeyCheck, as on People and Your key).
 */
import { useState } from "preact/hooks";
import { InputError, type VaultClient } from "../../../../sdk";
import type { EmergencyGrant } from "../../../../sdk/client";
import { readGrants, useGrantAction } from "../../emergency-grants";
import { ErrorNote, Field, inputValue, Submit, useAction } from "../../components/ui";
import { KeyCheck } from "../../components/key-check";
import { LEVEL_EFFECT, LEVEL_NAME, waitWords, when } from "./words";
import { GrantTitle } from "./grant-title";
import type { Colleagues } from "./colleagues";

type Level = EmergencyGrant["level"];

export function YouGrant(props: { client: VaultClient; granted: EmergencyGrant[] | null; colleagues: Colleagues }) {
  const { client, granted } = props;
  return (
    <section aria-labelledby="you-grant-heading">
      <h2 id="you-grant-heading">You grant</h2>
      <GrantForm client={client} granted={granted ?? []} colleagues={props.colleagues} />
      {granted && <GrantedList client={client} granted={granted} />}
    </section>
  );
}

function GrantForm({ client, granted, colleagues }: { client: VaultClient; granted: EmergencyGrant[]; colleagues: Colleagues }) {
  const { people, read } = colleagues;
  const [chosen, setChosen] = useState("");
  const [level, setLevel] = useState<Level>("read");
  const [days, setDays] = useState("7");
  const [done, setDone] = useState<string | null>(null);
  const act = useAction();
  const person = people?.find((p) => p.userId === chosen);
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    void act.run(async () => {
      if (!person) throw new InputError("Choose the colleague to grant emergency access to.");
      const n = Number(days);
      if (!Number.isInteger(n) || n < 1 || n > 90) throw new InputError("The wait is a whole number of days, from 1 to 90.");
      // One grant per colleague: choosing them again changes it, except while they ask (its level and wait are fixed then).
      const existing = granted.find((g) => g.granteeId === person.userId);
      if (existing?.status === "waiting" || existing?.status === "released")
        throw new InputError(`${person.email} asked for access under the grant you made: refuse their request before you change it.`);
      await client.emergency.grant(person.userId, { level, waitHours: n * 24 }, existing?.grantId);
      await readGrants(client);
      setDone(
        `${person.email} may ask for emergency access (${LEVEL_NAME[level].toLowerCase()}): it opens ${waitWords(n * 24)} after they ask, unless you refuse.`,
      );
    });
  };
  return (
    <>
      <form aria-label="Grant emergency access" onSubmit={submit}>
        <Field id="grant-person" label="Colleague">
          <select id="grant-person" value={chosen} onChange={(e) => setChosen(inputValue(e))}>
            <option value="">Choose a colleague…</option>
            {(people ?? []).map((p) => (
              <option key={p.userId} value={p.userId}>
                {p.email}
              </option>
            ))}
          </select>
        </Field>
        <LevelChoice level={level} setLevel={setLevel} />
        <WaitField days={days} setDays={setDays} />
        <Submit busy={act.busy}>Grant emergency access</Submit>
        <ErrorNote error={act.error} />
        {done && (
          <p class="note" role="status">
            {done}
          </p>
        )}
      </form>
      {person && (
        <div class="card" role="region" aria-label={`${person.email}'s key`}>
          <KeyCheck client={client} person={person} onChecked={read} />
        </div>
      )}
    </>
  );
}

function WaitField({ days, setDays }: { days: string; setDays(days: string): void }) {
  return (
    <Field id="grant-days" label="Wait in days" hint="From 1 to 90: how long after they ask it opens, unless you refuse in the meantime.">
      <input
        id="grant-days"
        type="number"
        min={1}
        max={90}
        step={1}
        required
        aria-describedby="grant-days-hint"
        value={days}
        onInput={(e) => setDays(inputValue(e))}
      />
    </Field>
  );
}

function LevelChoice({ level, setLevel }: { level: Level; setLevel(level: Level): void }) {
  return (
    <fieldset>
      <legend>Level</legend>
      {(["read", "takeover"] as const).map((l) => (
        <div key={l}>
          <label>
            <input type="radio" name="grant-level" value={l} checked={level === l} onChange={() => setLevel(l)} />
            {LEVEL_NAME[l]}: <span class="meta">{LEVEL_EFFECT[l]}</span>
          </label>
        </div>
      ))}
    </fieldset>
  );
}

/** Where a grant made stands, in a sentence. */
function grantedStatus(g: EmergencyGrant): string {
  switch (g.status) {
    case "idle":
      return g.refusedAt ? `Not asked for (you refused a request on ${when(g.refusedAt)}).` : "Not asked for.";
    case "waiting":
      return `Asked for on ${when(g.requestedAt)}: it opens ${when(g.availableAt)} unless you refuse.`;
    case "released":
      return (
        `Asked for on ${when(g.requestedAt)}; the wait ended ${when(g.availableAt)}: they can open it until you refuse.` +
        (g.openedAt ? ` They opened it on ${when(g.openedAt)}.` : "")
      );
    case "stale":
      return "Stale: made under your earlier password or keys, or their earlier keys. It opens nothing until you make it again.";
  }
}

function GrantedList({ client, granted }: { client: VaultClient; granted: EmergencyGrant[] }) {
  const { act, run } = useGrantAction(client);
  // One grant at a time, once the person confirmed it: a server could list a grant replaced or revoked elsewhere.
  const renew = (g: EmergencyGrant) =>
    confirm(`Make ${g.email}'s emergency access again: ${LEVEL_NAME[g.level].toLowerCase()}, after a wait of ${waitWords(g.waitHours)}?`) &&
    run(async () => {
      const { stale } = await client.emergency.renew(g.grantId);
      if (stale.length > 0)
        throw new InputError(
          `${g.email}'s emergency access could not be made again: this device has not checked their new key (choose them in the form above to compare it), or this grant is not one you made.`,
        );
    });
  const revoke = (g: EmergencyGrant) =>
    confirm(`Revoke ${g.email}'s emergency access? They can no longer ask for it.`) && run(() => client.emergency.remove(g.grantId));
  if (granted.length === 0) return <p>You have not granted anyone emergency access.</p>;
  return (
    <>
      <ErrorNote error={act.error} />
      <ul class="list" aria-label="Emergency access you granted">
        {granted.map((g) => (
          <li key={g.grantId}>
            <div>
              <GrantTitle grant={g} />
              <p class={g.status === "idle" ? "meta" : "danger-text"}>{grantedStatus(g)}</p>
            </div>
            {(g.status === "waiting" || g.status === "released") && (
              <button type="button" class="danger" disabled={act.busy} onClick={() => run(() => client.emergency.refuse(g.grantId))}>
                Refuse
              </button>
            )}
            {g.status === "stale" && (
              <button type="button" disabled={act.busy} onClick={() => renew(g)}>
                Make again
              </button>
            )}
            <button type="button" class="secondary" disabled={act.busy} onClick={() => revoke(g)}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}
