/** Account recovery, as a trustee sees it: the recoveries this user is asked to approve, each after a call. */
import { useEffect, useState } from "preact/hooks";
import type { RecoveryTask } from "../../../../sdk";
import { currentClient } from "../../session";
import { ErrorNote, Field, inputValue, useAction } from "../../components/ui";
import { when } from "./when";

export function TrusteeTasks() {
  const client = currentClient();
  const [tasks, setTasks] = useState<RecoveryTask[]>([]);
  const [codes, setCodes] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const act = useAction();
  const reload = () => act.run(async () => setTasks(await client.recovery.tasks()));
  useEffect(() => void reload(), []);
  const approve = (t: RecoveryTask) =>
    void act.run(async () => {
      const { confirmation } = await client.recovery.approve(t.requestId, codes[t.requestId] ?? "");
      setDone(
        `You approved ${t.email}'s recovery: your share went to their new device only. Now read this code back to them: ${confirmation}`,
      );
      setTasks(await client.recovery.tasks());
    });
  return (
    <section aria-labelledby="tasks">
      <h2 id="tasks">Recoveries you are asked to approve</h2>
      {tasks.length === 0 && <p>None.</p>}
      {tasks.map((t) => (
        <div key={t.requestId} class="note" data-testid="recovery-task">
          <p>
            <strong>{t.email}</strong> asked to recover their account on {when(t.createdAt)} ({t.approvedBy.length} of {t.threshold}{" "}
            approvals). Call them on a number you know, and ask for the code their new device shows. Approve only if it matches.
          </p>
          {t.legacy && (
            <p>
              Their enrolment was made before enrolments had versions, so this browser cannot tell it from one they have since replaced: ask
              them whether you are still one of their trustees.
            </p>
          )}
          {t.approved ? (
            <p>You approved it.</p>
          ) : (
            <>
              <Field id={`code-${t.requestId}`} label="The code they read out">
                <input
                  id={`code-${t.requestId}`}
                  value={codes[t.requestId] ?? ""}
                  onInput={(e) => setCodes({ ...codes, [t.requestId]: inputValue(e) })}
                />
              </Field>
              <button type="button" onClick={() => approve(t)}>
                Approve
              </button>
            </>
          )}
        </div>
      ))}
      {done && (
        <p class="note" role="status" data-testid="recovery-confirmation">
          {done}
        </p>
      )}
      <ErrorNote error={act.error} />
    </section>
  );
}
