/** A vault's signed member history, each removal with a way to see what the person could read. */
import { describeLink, type VerifiedRoster } from "../../../../sdk";

export function MemberHistory(props: {
  roster: VerifiedRoster | null;
  me: string;
  email(id: string): string;
  onExposure(userId: string): void;
}) {
  const { roster, me, email } = props;
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">Member history</h2>
      {roster ? (
        <ol class="history">
          {roster.links.map((l) => (
            <li key={l.seq}>
              <time dateTime={l.at}>{new Date(l.at).toLocaleString()}</time> {email(l.actorId)} {describeLink(l, email)}
              {l.op === "remove" && l.subjectId && l.subjectId !== me && (
                <>
                  {" "}
                  <button type="button" class="secondary" onClick={() => props.onExposure(l.subjectId!)}>
                    What {email(l.subjectId)} could read
                  </button>
                </>
              )}
            </li>
          ))}
        </ol>
      ) : (
        <p>This vault has no signed member history: its member list is the server's word.</p>
      )}
    </section>
  );
}
