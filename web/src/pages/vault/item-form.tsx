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
import { Choice, Field, inputValue } from "../../ui";

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
  const [type, setType] = useState<ItemType>(item?.type ?? "login");
  const [name, setName] = useState(item?.name ?? "");
  const [fields, setFields] = useState<Record<string, string>>({ ...(item?.fields ?? {}) });
  const [urls, setUrls] = useState<ItemUrl[]>(item ? itemUrls(item) : [{ url: "", match: "domain" }]);
  const [totp, setTotp] = useState(item?.totp ?? "");
  const [totpError, setTotpError] = useState<string | undefined>();
  const [custom, setCustom] = useState<CustomField[]>(item?.custom ?? []);
  const [favorite, setFavorite] = useState(item?.favorite ?? false);
  const [shown, setShown] = useState(false);
  // The seed is checked as it is typed, with the TOTP code lazily loaded (not on the first page).
  useEffect(() => {
    if (!totp.trim()) return setTotpError(undefined);
    void import("../../../../sdk/totp").then(({ totpProblem }) => setTotpError(totpProblem(totp)));
  }, [totp]);
  const setField = (key: string, value: string) => setFields({ ...fields, [key]: value });

  const submit = (e: Event) => {
    e.preventDefault();
    if (totpError) return;
    const kept: Record<string, string> = {};
    const known = new Set(TYPE_FIELDS[type].map((f) => f.key));
    const anyType = new Set(ITEM_TYPES.flatMap((t) => TYPE_FIELDS[t].map((f) => f.key)));
    for (const [k, v] of Object.entries(fields)) {
      // This type's fields, unless emptied; a field of an earlier release that no type shows stays; another type's
      // fields (the type was changed) and the old `url` (now a website) go.
      if (v && (known.has(k) || (!anyType.has(k) && k !== "url"))) kept[k] = v;
    }
    const websites = type === "login" ? urls.map((u) => ({ ...u, url: completeItemUrl(u.url) ?? "" })).filter((u) => u.url) : [];
    const content: ItemContent = { name, type, fields: kept };
    if (websites.length > 0) content.urls = websites;
    if (type === "login" && totp.trim()) content.totp = totp.trim();
    const customs = custom.filter((c) => c.name.trim());
    if (customs.length > 0) content.custom = customs;
    if (favorite) content.favorite = true;
    onSave(content);
  };

  return (
    <form onSubmit={submit} class="card" aria-label={item ? `Edit ${item.name}` : "New item"}>
      <h3>{item ? `Edit ${item.name}` : "New item"}</h3>
      <Choice id="item-type" label="Type" value={type} options={ITEM_TYPES.map((t) => [t, TYPE_LABELS[t]] as const)} onChange={setType} />
      <Field id="item-name" label="Name">
        <input id="item-name" required value={name} onInput={(e) => setName(inputValue(e))} />
      </Field>
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
                setShown(true);
              }}
            >
              Generate a password
            </button>{" "}
          </>
        )}
        {TYPE_FIELDS[type].some((f) => f.secret) && (
          <button type="button" class="secondary" aria-pressed={shown} onClick={() => setShown(!shown)}>
            {shown ? "Hide secrets" : "Show secrets"}
          </button>
        )}
      </p>
      {type === "login" && (
        <fieldset>
          <legend>Websites</legend>
          {urls.map((u, n) => (
            <div key={n} class="inline">
              <Field id={`item-url-${n}`} label={n === 0 ? "Website" : `Website ${n + 1}`}>
                <input
                  id={`item-url-${n}`}
                  inputMode="url"
                  autocomplete="off"
                  value={u.url}
                  onInput={(e) => setUrls(urls.map((x, i) => (i === n ? { ...x, url: inputValue(e) } : x)))}
                />
              </Field>
              <Choice
                id={`item-url-match-${n}`}
                label={`How address ${n + 1} matches`}
                value={u.match}
                options={URL_MATCHES.map((m) => [m, MATCH_LABELS[m]] as const)}
                onChange={(match) => setUrls(urls.map((x, i) => (i === n ? { ...x, match } : x)))}
              />
              <button type="button" class="secondary" onClick={() => setUrls(urls.filter((_, i) => i !== n))}>
                Remove address {n + 1}
              </button>
            </div>
          ))}
          <button type="button" class="secondary" onClick={() => setUrls([...urls, { url: "", match: "domain" }])}>
            Add a website
          </button>
        </fieldset>
      )}
      {type === "login" && (
        <Field id="item-totp" label="One-time code seed (TOTP)" hint="An otpauth:// address or the secret a site shows under its QR code">
          <input
            id="item-totp"
            autocomplete="off"
            value={totp}
            onInput={(e) => setTotp(inputValue(e))}
            aria-invalid={totpError ? true : undefined}
          />
        </Field>
      )}
      {totpError && (
        <p class="error" role="alert">
          {totpError}
        </p>
      )}
      <fieldset>
        <legend>Custom fields</legend>
        {custom.map((c, n) => (
          <div key={n} class="inline">
            <Field id={`custom-name-${n}`} label={`Field ${n + 1} name`}>
              <input
                id={`custom-name-${n}`}
                value={c.name}
                onInput={(e) => setCustom(custom.map((x, i) => (i === n ? { ...x, name: inputValue(e) } : x)))}
              />
            </Field>
            <Field id={`custom-value-${n}`} label={`Field ${n + 1} value`}>
              <input
                id={`custom-value-${n}`}
                type={(c.hidden && !shown ? "password" : "text") as "text"}
                autocomplete="off"
                value={c.value}
                onInput={(e) => setCustom(custom.map((x, i) => (i === n ? { ...x, value: inputValue(e) } : x)))}
              />
            </Field>
            <label>
              <input
                type="checkbox"
                checked={c.hidden}
                onChange={(e) =>
                  setCustom(custom.map((x, i) => (i === n ? { ...x, hidden: (e.currentTarget as HTMLInputElement).checked } : x)))
                }
              />{" "}
              Hidden
            </label>
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => setCustom([...custom, { name: "", value: "", hidden: false }])}>
          Add a field
        </button>
      </fieldset>
      <p>
        <label>
          <input type="checkbox" checked={favorite} onChange={(e) => setFavorite((e.currentTarget as HTMLInputElement).checked)} />{" "}
          Favourite
        </label>
      </p>
      <button type="submit" disabled={busy || totpError !== undefined}>
        Save item
      </button>{" "}
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
