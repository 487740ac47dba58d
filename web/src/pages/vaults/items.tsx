/** One item shown (its fields, copy to the clipboard) and the form that adds or edits one. */
import { useState } from "preact/hooks";
import { completeItemUrl, generatePassword, openableUrl, type Item } from "../../../../sdk";
import { clipboardClearMs } from "../../session";
import { Field, inputValue } from "../../ui";

export function ItemView({ item, onEdit, onDelete }: { item: Item; onEdit(): void; onDelete(): void }) {
  const [revealed, setRevealed] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);
  const { password, username, url, notes } = item.fields;
  const copy = async (value: string, what: string) => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      return setCopied(`The browser did not allow copying: select the ${what} and copy it by hand.`);
    }
    const wait = clipboardClearMs();
    setCopied(`Copied. The clipboard will be cleared in ${Math.round(wait / 1000)} seconds.`);
    setTimeout(async () => {
      // Only if it still holds what was copied here.
      const now = await navigator.clipboard.readText().catch(() => value);
      if (now === value) await navigator.clipboard.writeText("").catch(() => undefined);
      setCopied("The clipboard was cleared.");
    }, wait);
  };
  const href = openableUrl(url);
  return (
    <div class="card" aria-label={`Item ${item.name}`} role="region">
      <h3>{item.name}</h3>
      <dl>
        {username !== undefined && (
          <div>
            <dt>username</dt>
            <dd>
              <span data-testid="username">{username}</span>{" "}
              <button type="button" class="secondary" onClick={() => void copy(username, "username")}>
                Copy username
              </button>
            </dd>
          </div>
        )}
        {url !== undefined && (
          <div>
            <dt>website</dt>
            <dd>
              {href ? (
                <a href={href} target="_blank" rel="noopener noreferrer">
                  {url}
                </a>
              ) : (
                <span title="Not a web address: not opened from here">{url}</span>
              )}
            </dd>
          </div>
        )}
        {Object.entries(item.fields)
          .filter(([k]) => !["password", "username", "url", "notes"].includes(k))
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd class="multiline">{v}</dd>
            </div>
          ))}
        {password !== undefined && (
          <div>
            <dt>password</dt>
            <dd>
              <code data-testid="password">{revealed ? password : "••••••••••••"}</code>{" "}
              <button type="button" class="secondary" aria-pressed={revealed} onClick={() => setRevealed(!revealed)}>
                {revealed ? "Hide" : "Reveal"}
              </button>{" "}
              <button type="button" class="secondary" onClick={() => void copy(password, "password")}>
                Copy password
              </button>
            </dd>
          </div>
        )}
        {notes !== undefined && (
          <div>
            <dt>notes</dt>
            <dd class="multiline" data-testid="notes">
              {notes}
            </dd>
          </div>
        )}
      </dl>
      {copied && (
        <p role="status" class="note">
          {copied}
        </p>
      )}
      <p class="meta">
        Revision {item.revision} · changed {new Date(item.updatedAt).toLocaleString()}
      </p>
      <button type="button" onClick={onEdit}>
        Edit
      </button>{" "}
      <button type="button" class="danger" onClick={onDelete}>
        Delete
      </button>
    </div>
  );
}

export function ItemForm({
  item,
  busy,
  onSave,
  onCancel,
}: {
  item?: Item;
  busy: boolean;
  onSave(content: { name: string; fields: Record<string, string> }): void;
  onCancel(): void;
}) {
  const [name, setName] = useState(item?.name ?? "");
  const [username, setUsername] = useState(item?.fields.username ?? "");
  const [password, setPassword] = useState(item?.fields.password ?? "");
  const [url, setUrl] = useState(item?.fields.url ?? "");
  const [notes, setNotes] = useState(item?.fields.notes ?? "");
  const [shown, setShown] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    const fields: Record<string, string> = { ...(item?.fields ?? {}) };
    for (const [k, v] of Object.entries({ username, password, url: completeItemUrl(url), notes })) {
      if (v) fields[k] = v;
      else delete fields[k];
    }
    onSave({ name, fields });
  };
  return (
    <form onSubmit={submit} class="card" aria-label={item ? `Edit ${item.name}` : "New item"}>
      <h3>{item ? `Edit ${item.name}` : "New item"}</h3>
      <Field id="item-name" label="Name">
        <input id="item-name" required value={name} onInput={(e) => setName(inputValue(e))} />
      </Field>
      <Field id="item-username" label="Username">
        <input id="item-username" autocomplete="off" value={username} onInput={(e) => setUsername(inputValue(e))} />
      </Field>
      <Field id="item-password" label="Password">
        <input
          id="item-password"
          type={(shown ? "text" : "password") as "password"}
          autocomplete="new-password"
          value={password}
          onInput={(e) => setPassword(inputValue(e))}
        />
      </Field>
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setPassword(generatePassword(24));
            setShown(true);
          }}
        >
          Generate a password
        </button>{" "}
        <button type="button" class="secondary" aria-pressed={shown} onClick={() => setShown(!shown)}>
          {shown ? "Hide password" : "Show password"}
        </button>
      </p>
      <Field id="item-url" label="Website">
        <input id="item-url" inputMode="url" autocomplete="off" value={url} onInput={(e) => setUrl(inputValue(e))} />
      </Field>
      <Field id="item-notes" label="Notes">
        <textarea id="item-notes" value={notes} onInput={(e) => setNotes(inputValue(e))} />
      </Field>
      <button type="submit" disabled={busy}>
        Save item
      </button>{" "}
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
