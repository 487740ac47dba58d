/** The form that adds or edits an item: its type's fields, a login's websites and TOTP seed, custom fields, the favourite mark. */
import { useEffect, useState } from "preact/hooks";
import {
  completeItemUrl,
  generatePassword,
  itemUrls,
  ITEM_TYPES,
  TYPE_FIELDS,
  TYPE_LABELS,
  URL_MATCHES,
  type CustomField,
  type Item,
  type ItemContent,
  type ItemType,
  type ItemUrl,
  type UrlMatch,
} from "../../../../sdk";
import { Choice, Field, inputValue } from "../../components/ui";
import { PasskeyList } from "../../components/passkeys";

const MATCH_LABELS: Record<UrlMatch, string> = {
  domain: "Same domain",
  host: "Same host",
  startsWith: "Starts with",
  exact: "Exactly",
  never: "Never",
};

export function ItemForm({
  item,
  busy,
  onSave,
  onCancel,
}: {
  item?: Item;
  busy: boolean;
  onSave(content: ItemContent): void;
  onCancel(): void;
}) {
  const draft = useDraft(item);
  const { type, shown } = draft;
  const submit = (e: Event) => {
    e.preventDefault();
    if (draft.totpError) return;
    onSave(draft.content());
  };
  return (
    <form onSubmit={submit} class="card" aria-label={item ? `Edit ${item.name}` : "New item"}>
      <h3>{item ? `Edit ${item.name}` : "New item"}</h3>
      <Choice
        id="item-type"
        label="Type"
        value={type}
        options={ITEM_TYPES.map((t) => [t, TYPE_LABELS[t]] as const)}
        onChange={draft.setType}
      />
      <Field id="item-name" label="Name">
        <input id="item-name" required value={draft.name} onInput={(e) => draft.setName(inputValue(e))} />
      </Field>
      <TypeFields draft={draft} />
      {type === "login" && <Websites urls={draft.urls} onChange={draft.setUrls} />}
      {type === "login" && <TotpSeed value={draft.totp} error={draft.totpError} onInput={draft.setTotp} />}
      {type === "login" && <PasskeyList passkeys={draft.passkeys} onChange={draft.setPasskeys} />}
      {item?.attachments && item.attachments.length > 0 && (
        <p class="hint">Its files stay as they are: attach or remove files in the item's view.</p>
      )}
      {draft.totpError && (
        <p class="error" role="alert">
          {draft.totpError}
        </p>
      )}
      <CustomFields custom={draft.custom} shown={shown} onChange={draft.setCustom} />
      <Marks draft={draft} />
      <button type="submit" disabled={busy || draft.totpError !== undefined}>
        Save item
      </button>{" "}
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

/** How the item is found and kept: favourite, archived, its tags. */
function Marks({ draft }: { draft: Draft }) {
  return (
    <>
      <p>
        <label>
          <input type="checkbox" checked={draft.favorite} onChange={(e) => draft.setFavorite(checked(e))} /> Favourite
        </label>{" "}
        <label>
          <input type="checkbox" checked={draft.archived} onChange={(e) => draft.setArchived(checked(e))} /> Archived (kept, out of the
          everyday lists)
        </label>
      </p>
      <Field id="item-tags" label="Tags, one a line" hint="A folder path is one tag: Work/Servers.">
        <textarea
          id="item-tags"
          rows={2}
          value={draft.tags}
          onInput={(e) => draft.setTags(inputValue(e))}
          aria-describedby="item-tags-hint"
        />
      </Field>
    </>
  );
}

const checked = (e: Event) => (e.currentTarget as HTMLInputElement).checked;

/** The item as the form holds it while it is typed, and the content it saves. */
function useDraft(item?: Item) {
  const [type, setType] = useState<ItemType>(item?.type ?? "login");
  const [name, setName] = useState(item?.name ?? "");
  const [fields, setFields] = useState<Record<string, string>>({ ...(item?.fields ?? {}) });
  const [urls, setUrls] = useState<ItemUrl[]>(item ? itemUrls(item) : [{ url: "", match: "domain" }]);
  const [totp, setTotp] = useState(item?.totp ?? "");
  const [totpError, setTotpError] = useState<string | undefined>();
  const [custom, setCustom] = useState<CustomField[]>(item?.custom ?? []);
  const [favorite, setFavorite] = useState(item?.favorite ?? false);
  const [tags, setTags] = useState((item?.tags ?? []).join("\n"));
  const [archived, setArchived] = useState(item?.archived ?? false);
  const [passkeys, setPasskeys] = useState(item?.passkeys ?? []);
  const [shown, setShown] = useState(false);
  // The seed is checked as it is typed, with the TOTP code lazily loaded (not on the first page).
  useEffect(() => {
    if (!totp.trim()) return setTotpError(undefined);
    void import("../../../../sdk/totp").then(({ totpProblem }) => setTotpError(totpProblem(totp)));
  }, [totp]);
  const setField = (key: string, value: string) => setFields({ ...fields, [key]: value });
  const content = (): ItemContent => {
    const result: ItemContent = { name, type, fields: keptFields(type, fields) };
    const websites = type === "login" ? urls.map((u) => ({ ...u, url: completeItemUrl(u.url) ?? "" })).filter((u) => u.url) : [];
    if (websites.length > 0) result.urls = websites;
    if (type === "login" && totp.trim()) result.totp = totp.trim();
    const customs = custom.filter((c) => c.name.trim());
    if (customs.length > 0) result.custom = customs;
    if (favorite) result.favorite = true;
    // One tag a line: a tag may hold a comma (a folder's name), never a line break.
    const kept = [...new Set(tags.split("\n").map((t) => t.trim()))].filter(Boolean);
    if (kept.length > 0) result.tags = kept;
    if (archived) result.archived = true;
    if (type === "login" && passkeys.length > 0) result.passkeys = passkeys;
    // Files are attached and removed in the item's view: an edit keeps them as they are, keys and all.
    if (item?.attachments && item.attachments.length > 0) result.attachments = item.attachments;
    return result;
  };
  return {
    type,
    setType,
    name,
    setName,
    fields,
    setField,
    urls,
    setUrls,
    totp,
    setTotp,
    totpError,
    custom,
    setCustom,
    favorite,
    setFavorite,
    tags,
    setTags,
    archived,
    setArchived,
    passkeys,
    setPasskeys,
    shown,
    setShown,
    content,
  };
}

type Draft = ReturnType<typeof useDraft>;

/** The fields saved for an item of `type`. */
function keptFields(type: ItemType, fields: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  const known = new Set(TYPE_FIELDS[type].map((f) => f.key));
  const anyType = new Set(ITEM_TYPES.flatMap((t) => TYPE_FIELDS[t].map((f) => f.key)));
  for (const [k, v] of Object.entries(fields)) {
    // This type's fields, unless emptied; a field of an earlier release that no type shows stays; another type's
    // fields (the type was changed) and the old `url` (now a website) go.
    if (v && (known.has(k) || (!anyType.has(k) && k !== "url"))) kept[k] = v;
  }
  return kept;
}

/** The fields of the item's type, secrets masked unless shown; a login's password can be generated. */
function TypeFields({ draft }: { draft: Draft }) {
  const { type, fields, shown, setField } = draft;
  return (
    <>
      {TYPE_FIELDS[type].map((f) => {
        const id = `item-${f.key}`;
        if (f.multiline)
          return (
            <Field key={f.key} id={id} label={f.label}>
              <textarea id={id} value={fields[f.key] ?? ""} onInput={(e) => setField(f.key, inputValue(e))} />
            </Field>
          );
        return (
          <Field key={f.key} id={id} label={f.label}>
            <input
              id={id}
              type={(f.secret && !shown ? "password" : "text") as "text"}
              autocomplete={f.key === "password" ? "new-password" : "off"}
              value={fields[f.key] ?? ""}
              onInput={(e) => setField(f.key, inputValue(e))}
            />
          </Field>
        );
      })}
      <p>
        {type === "login" && (
          <>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setField("password", generatePassword(24));
                draft.setShown(true);
              }}
            >
              Generate a password
            </button>{" "}
          </>
        )}
        {TYPE_FIELDS[type].some((f) => f.secret) && (
          <button type="button" class="secondary" aria-pressed={shown} onClick={() => draft.setShown(!shown)}>
            {shown ? "Hide secrets" : "Show secrets"}
          </button>
        )}
      </p>
    </>
  );
}

/** A login's websites, each with how it matches a page's address. */
function Websites({ urls, onChange }: { urls: ItemUrl[]; onChange(urls: ItemUrl[]): void }) {
  const edit = (n: number, change: Partial<ItemUrl>) => onChange(urls.map((x, i) => (i === n ? { ...x, ...change } : x)));
  return (
    <fieldset>
      <legend>Websites</legend>
      {urls.map((u, n) => (
        <div key={n} class="inline">
          <Field id={`item-url-${n}`} label={n === 0 ? "Website" : `Website ${n + 1}`}>
            <input id={`item-url-${n}`} inputMode="url" autocomplete="off" value={u.url} onInput={(e) => edit(n, { url: inputValue(e) })} />
          </Field>
          <Choice
            id={`item-url-match-${n}`}
            label={`How address ${n + 1} matches`}
            value={u.match}
            options={URL_MATCHES.map((m) => [m, MATCH_LABELS[m]] as const)}
            onChange={(match) => edit(n, { match })}
          />
          <button type="button" class="secondary" onClick={() => onChange(urls.filter((_, i) => i !== n))}>
            Remove address {n + 1}
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => onChange([...urls, { url: "", match: "domain" }])}>
        Add a website
      </button>
    </fieldset>
  );
}

function TotpSeed({ value, error, onInput }: { value: string; error?: string; onInput(value: string): void }) {
  return (
    <Field id="item-totp" label="One-time code seed (TOTP)" hint="An otpauth:// address or the secret a site shows under its QR code">
      <input
        id="item-totp"
        autocomplete="off"
        value={value}
        onInput={(e) => onInput(inputValue(e))}
        aria-invalid={error ? true : undefined}
      />
    </Field>
  );
}

/** Fields of the person's own: a name, a value, and whether the value is masked like a password. */
function CustomFields({ custom, shown, onChange }: { custom: CustomField[]; shown: boolean; onChange(custom: CustomField[]): void }) {
  const edit = (n: number, change: Partial<CustomField>) => onChange(custom.map((x, i) => (i === n ? { ...x, ...change } : x)));
  return (
    <fieldset>
      <legend>Custom fields</legend>
      {custom.map((c, n) => (
        <div key={n} class="inline">
          <Field id={`custom-name-${n}`} label={`Field ${n + 1} name`}>
            <input id={`custom-name-${n}`} value={c.name} onInput={(e) => edit(n, { name: inputValue(e) })} />
          </Field>
          <Field id={`custom-value-${n}`} label={`Field ${n + 1} value`}>
            <input
              id={`custom-value-${n}`}
              type={(c.hidden && !shown ? "password" : "text") as "text"}
              autocomplete="off"
              value={c.value}
              onInput={(e) => edit(n, { value: inputValue(e) })}
            />
          </Field>
          <label>
            <input type="checkbox" checked={c.hidden} onChange={(e) => edit(n, { hidden: checked(e) })} /> Hidden
          </label>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => onChange([...custom, { name: "", value: "", hidden: false }])}>
        Add a field
      </button>
    </fieldset>
  );
}
