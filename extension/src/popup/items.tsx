/** The popup's search over every vault the user can open, with copy buttons and the current one-time code. */
import { useEffect, useState } from "preact/hooks";
import { ask, type ItemSummary } from "../messages";

export function Items() {
  const [query, setQuery] = useState("");
  const [items, setItems] = useState<ItemSummary[] | undefined>();
  /** What was not shown or not used, and why (a vault that does not check out): said above the list. */
  const [problem, setProblem] = useState<string | undefined>();
  const [said, setSaid] = useState<{ text: string; error?: boolean } | undefined>();
  useEffect(() => {
    let current = true;
    ask<{ items: ItemSummary[]; problem?: string }>({ kind: "search", query }).then(
      (r) => {
        if (!current) return;
        setItems(r.items);
        setProblem(r.problem);
      },
      (err: Error) => current && setSaid({ text: err.message, error: true }),
    );
    return () => void (current = false);
  }, [query]);
  const copy = async (item: ItemSummary, field: "username" | "password" | "totp", label: string) => {
    try {
      const { value } = await ask<{ value: string }>({ kind: "secret", key: item.key, field });
      await navigator.clipboard.writeText(value);
      await ask({ kind: "copied" });
      setSaid({ text: `${label} of ${item.name} copied; the clipboard is cleared in 30 seconds.` });
    } catch (err) {
      setSaid({ text: (err as Error).message, error: true });
    }
  };
  return (
    <>
      <div class="field">
        <label for="search">Search</label>
        <input id="search" type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
      </div>
      {problem && (
        <p class="warning" role="alert">
          {problem}
        </p>
      )}
      {said && (
        <p class={said.error ? "error" : "meta"} role={said.error ? "alert" : "status"}>
          {said.text}
        </p>
      )}
      {items === undefined ? (
        <p class="meta">Opening your vaults…</p>
      ) : items.length === 0 ? (
        <p class="meta">Nothing found.</p>
      ) : (
        <ul class="items" aria-label="Items">
          {items.map((item) => (
            <Row key={item.key} item={item} copy={copy} />
          ))}
        </ul>
      )}
    </>
  );
}

function Row({ item, copy }: { item: ItemSummary; copy: (i: ItemSummary, f: "username" | "password" | "totp", label: string) => void }) {
  return (
    <li>
      <strong>{item.name}</strong>
      <span class="meta">
        {" "}
        {item.username} · {item.vaultName}
      </span>
      <div class="actions">
        {item.username && (
          <button
            type="button"
            class="secondary"
            aria-label={`Copy username of ${item.name}`}
            onClick={() => copy(item, "username", "Username")}
          >
            Copy username
          </button>
        )}
        {item.hasPassword && (
          <button
            type="button"
            class="secondary"
            aria-label={`Copy password of ${item.name}`}
            onClick={() => copy(item, "password", "Password")}
          >
            Copy password
          </button>
        )}
        {item.hasTotp && (
          <button
            type="button"
            class="secondary"
            aria-label={`Copy code of ${item.name}`}
            onClick={() => copy(item, "totp", "One-time code")}
          >
            Copy code
          </button>
        )}
      </div>
    </li>
  );
}
