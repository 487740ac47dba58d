/**
 * A send opened by its link, `#/send/<id>/<secret>`, by anyone: no account, and no session is
 * used or changed (the SDK's `openSend` speaks to the public routes alone). Opening takes one of
 * the send's views, so it waits for "Open": a link preview or a prefetcher that loads the page
 * opens nothing. The secret in the fragment is the key: it is read here and handed to the SDK,
 * which derives keys from it; it is never sent, stored or logged. It stays in the address bar:
 * the browser's history and the message the link came in hold it already, and a reload before
 * Open needs it. Loaded apart from the first page (lazy.tsx).
 */
import { useState } from "preact/hooks";
import { ApiError, needsSendPassword, openSend, parseSendLink, sentence, type OpenedSend } from "../../../../sdk";
import { fileSizeText } from "../../../../sdk/attachments/attachment";
import { API_URL, clipboardClearMs } from "../../session";
import { saveBlob } from "../../save-blob";
import { Busy, ErrorNote, PasswordField, Submit, nextPaint } from "../../components/ui";

export const SEND_GONE = "This send does not exist any more: it expired, was deleted, or was opened as many times as it allows.";
const WRONG_PASSWORD = "That password does not open this send.";

/** What the page says when an open fails: `withPassword`, a password was given. */
function refusal(err: unknown, withPassword: boolean): string {
  if (err instanceof ApiError && err.status === 404) return SEND_GONE;
  if (err instanceof ApiError && err.status === 401 && withPassword && needsSendPassword(err)) return WRONG_PASSWORD;
  if (err instanceof ApiError && err.status === 429) return err.message.replace(/\.?$/, ".");
  return sentence(err);
}

/** Opening the send of `link` on "Open": first without a password, then with the one typed once the server asks for it. */
function useOpening(link: string) {
  const [asksPassword, setAsksPassword] = useState(false);
  const [password, setPassword] = useState("");
  const [opened, setOpened] = useState<OpenedSend | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<[number, number] | null>(null);
  const open = async (e: Event) => {
    e.preventDefault();
    const withPassword = asksPassword;
    setBusy(true);
    setError(null);
    // A password is stretched with Argon2id on this page: the status line shows first.
    await nextPaint();
    try {
      const sent = await openSend(link, {
        apiUrl: API_URL,
        ...(withPassword && { password }),
        onProgress: (done, parts) => setProgress([done, parts]),
      });
      setPassword("");
      setOpened(sent);
    } catch (err) {
      if (!withPassword && needsSendPassword(err)) setAsksPassword(true);
      else setError(refusal(err, withPassword));
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };
  return { asksPassword, password, setPassword, opened, error, busy, progress, open };
}

export function OpenSend({ sendId, secret }: { sendId: string; secret: string }) {
  // Only the key's parts are put together here, under the page's own origin: nothing the server says.
  const link = `${location.origin}/#/send/${sendId}/${secret}`;
  const { asksPassword, password, setPassword, opened, error, busy, progress, open } = useOpening(link);
  if (opened) return <Opened send={opened} />;
  return (
    <main>
      <h1>Someone sent you a secret</h1>
      {!parseSendLink(link) ? (
        <p class="error" role="alert">
          This link is not complete: part of it is missing or changed. Ask the sender for it again.
        </p>
      ) : (
        <form onSubmit={(e) => void open(e)} aria-label="Open the send">
          <p>
            Opening it counts as one view, and a send may open only a few times, or once: open it when you are ready to read or save it. It
            was sealed in the sender's browser and opens in yours; the server cannot read it.
          </p>
          {asksPassword && (
            <PasswordField
              id="send-password"
              label="Password"
              hint="The sender gives it to you apart from the link."
              autocomplete="off"
              required
              value={password}
              onInput={setPassword}
            />
          )}
          <Submit busy={busy}>Open</Submit>
        </form>
      )}
      {busy && <Busy label={progress ? `Reading the file: part ${progress[0]} of ${progress[1]}…` : "Opening…"} />}
      <ErrorNote error={error} />
    </main>
  );
}

/** What the link opened: its title, who the sender says they are, the text or the file, and what is left. */
function Opened({ send }: { send: OpenedSend }) {
  return (
    <main>
      <h1>{send.title}</h1>
      <p>{send.from !== undefined ? `The sender says they are ${send.from}.` : "The sender did not say who they are."}</p>
      {send.text !== undefined && <SentText text={send.text} />}
      {send.file && <SentFile file={send.file} />}
      <p class="meta" data-testid="send-left">
        {leftText(send)}
      </p>
    </main>
  );
}

function leftText(send: OpenedSend): string {
  // What is left is the server's word (the link vouches for what the send holds, not for this), and is said so.
  const until = `The server says it expires ${new Date(send.expiresAt).toLocaleString()}.`;
  if (send.viewsLeft === 0)
    return `The server says that was its last view: its link opens nothing more.${send.file ? " Download the file before you leave this page." : ""}`;
  if (send.viewsLeft === null) return `${until} Its link opens it again until then.`;
  return `${until} Its link opens it ${send.viewsLeft} more ${send.viewsLeft === 1 ? "time" : "times"}.`;
}

function SentText({ text }: { text: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      return setCopied("The browser did not allow copying: select the text and copy it by hand.");
    }
    const wait = clipboardClearMs();
    setCopied(`Copied. The clipboard will be cleared in ${Math.round(wait / 1000)} seconds.`);
    setTimeout(async () => {
      // Only if it still holds what was copied here.
      const now = await navigator.clipboard.readText().catch(() => text);
      if (now === text) await navigator.clipboard.writeText("").catch(() => undefined);
      setCopied("The clipboard was cleared.");
    }, wait);
  };
  return (
    <>
      <div class="field">
        <label for="send-text">The text</label>
        <textarea id="send-text" readOnly rows={Math.min(20, Math.max(4, text.split("\n").length + 1))} value={text} />
      </div>
      <button type="button" class="secondary" onClick={() => void copy()}>
        Copy
      </button>
      {copied && <span role="status"> {copied}</span>}
    </>
  );
}

function SentFile({ file }: { file: NonNullable<OpenedSend["file"]> }) {
  return (
    <p>
      <span>{file.name}</span> <span class="meta">{fileSizeText(file.size)}</span>{" "}
      <button
        type="button"
        aria-label={`Download ${file.name}`}
        // Saved as plain bytes under its name, so the browser never shows the file in the page.
        onClick={() => saveBlob(new Blob([file.data], { type: "application/octet-stream" }), file.name)}
      >
        Download
      </button>
    </p>
  );
}
