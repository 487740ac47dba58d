/**
 * "Sends": making a send (a text or a file, sealed here under a key only its link holds), its link
 * shown with Copy; then the member's sends (send-list.tsx). The server is handed the sealed parts,
 * the lifetime, the views and a proof of the password: never the link's secret, the password, the
 * title or the text. Loaded apart from the first page (lazy.tsx).
 */
import { useState } from "preact/hooks";
import { ApiError, InputError } from "../../../../sdk";
import type { SendContent, SendOptions } from "../../../../sdk/client";
import { currentClient } from "../../session";
import { Busy, Choice, ErrorNote, Field, PasswordField, Submit, inputValue, useAction } from "../../components/ui";
import { SendList } from "./send-list";

const LIFETIMES = [
  ["1h", "1 hour"],
  ["1d", "1 day"],
  ["7d", "7 days"],
  ["30d", "30 days"],
] as const;
type Lifetime = (typeof LIFETIMES)[number][0];

/** A send just made: its link, shown with what the sender must know to pass it on. */
interface Made {
  link: string;
  expiresAt: string;
  withPassword: boolean;
  maxViews?: number;
}

/** A new send refused, in the page's words: the organization's policy, or a limit in the server's own words. */
function refusal(err: unknown): Error {
  if (err instanceof ApiError && err.status === 403) return new InputError("Your organization does not allow sends.");
  if (err instanceof ApiError && err.status === 413) return new InputError(`The send was not made: ${err.message.replace(/\.?$/, ".")}`);
  return err as Error;
}

export function Sends() {
  const [made, setMade] = useState<Made | null>(null);
  const [version, setVersion] = useState(0);
  return (
    <main>
      <h1>Sends</h1>
      <p class="meta">
        A send is a text or a file for anyone you give its link to, for a while or a few views. It is sealed in this browser under a key
        that only its link holds: the server cannot read it.
      </p>
      <NewSend
        onMade={(m) => {
          setMade(m);
          setVersion((v) => v + 1);
        }}
      />
      {made && <MadeLink key={made.link} made={made} />}
      <SendList version={version} />
    </main>
  );
}

function useDraft() {
  const [kind, setKind] = useState<"text" | "file">("text");
  const [text, setText] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [title, setTitle] = useState("");
  const [expiresIn, setExpiresIn] = useState<Lifetime>("7d");
  const [maxViews, setMaxViews] = useState("");
  const [password, setPassword] = useState("");
  const [showEmail, setShowEmail] = useState(false);
  return {
    kind,
    setKind,
    text,
    setText,
    file,
    setFile,
    title,
    setTitle,
    expiresIn,
    setExpiresIn,
    maxViews,
    setMaxViews,
    password,
    setPassword,
    showEmail,
    setShowEmail,
  };
}
type Draft = ReturnType<typeof useDraft>;

async function contentOf(d: Draft): Promise<SendContent> {
  if (d.kind === "text") return { text: d.text };
  if (!d.file) throw new InputError("Choose the file to send.");
  return { file: { name: d.file.name, ...(d.file.type && { type: d.file.type }), data: new Uint8Array(await d.file.arrayBuffer()) } };
}

function NewSend({ onMade }: { onMade(made: Made): void }) {
  const d = useDraft();
  const act = useAction();
  const [progress, setProgress] = useState<[number, number] | null>(null);
  // A new key each send: the file input (which a value cannot clear) starts empty again.
  const [formKey, setFormKey] = useState(0);
  const submit = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const maxViews = d.maxViews.trim() === "" ? undefined : Number(d.maxViews);
      const opts: SendOptions = {
        expiresIn: d.expiresIn,
        linkBase: location.origin,
        showEmail: d.showEmail,
        onProgress: (sent, parts) => setProgress([sent, parts]),
        ...(d.title.trim() && { title: d.title.trim() }),
        ...(maxViews !== undefined && { maxViews }),
        ...(d.password && { password: d.password }),
      };
      try {
        const sent = await currentClient().sends.create(await contentOf(d), opts);
        onMade({
          link: sent.link,
          expiresAt: sent.expiresAt,
          withPassword: d.password !== "",
          ...(maxViews !== undefined && { maxViews }),
        });
      } catch (err) {
        throw refusal(err);
      } finally {
        setProgress(null);
      }
      d.setText("");
      d.setFile(null);
      d.setTitle("");
      d.setPassword("");
      setFormKey((k) => k + 1);
    });
  };
  return (
    <form key={formKey} onSubmit={submit} class="card" aria-label="Make a send">
      <h2>Make a send</h2>
      <ContentFields d={d} />
      <LimitFields d={d} />
      <Submit busy={act.busy}>Make the send</Submit>
      {act.busy && <Busy label={progress ? `Sealing and sending: part ${progress[0]} of ${progress[1]}…` : "Sealing…"} />}
      <ErrorNote error={act.error} />
    </form>
  );
}

function ContentFields({ d }: { d: Draft }) {
  const radio = (value: "text" | "file", label: string) => (
    <label>
      <input type="radio" name="send-kind" value={value} checked={d.kind === value} onChange={() => d.setKind(value)} /> {label}
    </label>
  );
  return (
    <>
      <fieldset>
        <legend>What to send</legend>
        {radio("text", "A text")} {radio("file", "A file")}
      </fieldset>
      {d.kind === "text" ? (
        <Field id="send-text" label="Text">
          <textarea id="send-text" required rows={5} value={d.text} onInput={(e) => d.setText(inputValue(e))} />
        </Field>
      ) : (
        <Field id="send-file" label="File">
          <input
            id="send-file"
            type="file"
            required
            onChange={(e) => d.setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null)}
          />
        </Field>
      )}
      <Field
        id="send-title"
        label="Title (optional)"
        hint={`What the recipient sees it called; by default "A secret", or the file's name.`}
      >
        <input id="send-title" aria-describedby="send-title-hint" value={d.title} onInput={(e) => d.setTitle(inputValue(e))} />
      </Field>
    </>
  );
}

function LimitFields({ d }: { d: Draft }) {
  return (
    <>
      <Choice id="send-expiry" label="Expires in" value={d.expiresIn} options={LIFETIMES} onChange={d.setExpiresIn} />
      <Field id="send-views" label="Max views (optional)" hint="How many times its link opens it; empty: until it expires.">
        <input
          id="send-views"
          type="number"
          min={1}
          max={1000}
          step={1}
          aria-describedby="send-views-hint"
          value={d.maxViews}
          onInput={(e) => d.setMaxViews(inputValue(e))}
        />
      </Field>
      <PasswordField
        id="send-password"
        label="Password (optional)"
        hint="The recipient types it as well: give it to them apart from the link."
        autocomplete="off"
        value={d.password}
        onInput={d.setPassword}
      />
      <p>
        <label>
          <input type="checkbox" checked={d.showEmail} onChange={(e) => d.setShowEmail((e.currentTarget as HTMLInputElement).checked)} />{" "}
          Show my email to the recipient
        </label>
      </p>
    </>
  );
}

/** The link of the send just made, with Copy and how to pass it on. */
function MadeLink({ made }: { made: Made }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = () =>
    void navigator.clipboard.writeText(made.link).then(
      () => setCopied("Copied."),
      () => setCopied("The browser did not allow copying: select the link and copy it by hand."),
    );
  const views = made.maxViews === undefined ? "" : `, ${made.maxViews} ${made.maxViews === 1 ? "time" : "times"}`;
  return (
    <div class="note" role="status">
      <p>
        Your send is ready. Its link opens it{views} until {new Date(made.expiresAt).toLocaleString()}:
      </p>
      <p>
        <code data-testid="send-link">{made.link}</code>
      </p>
      <button type="button" class="secondary" onClick={copy}>
        Copy link
      </button>
      {copied && <span> {copied}</span>}
      {made.withPassword ? (
        <p>
          <strong>Give the password apart from the link</strong> (say it, or send it another way): whoever has both can open the send.
        </p>
      ) : (
        <p>Anyone who has the link can open it: send it only to the person it is for.</p>
      )}
      <p>The key is in the link alone: this server never sees it, and cannot give it back if the link is lost.</p>
    </div>
  );
}
