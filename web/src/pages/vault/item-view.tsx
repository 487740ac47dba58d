/** One item shown: its type's fields, websites, one-time code and custom fields, each secret masked until revealed, copied to the clipboard and cleared. */
import { useEffect, useState } from "preact/hooks";
import { itemUrls, openableUrl, TYPE_FIELDS, TYPE_LABELS, type Item, type TotpCode } from "../../../../sdk";
import { clipboardClearMs } from "../../session";

export function ItemView({ item, onEdit, onDelete }: { item: Item; onEdit(): void; onDelete(): void }) {
  const [revealed, setRevealed] = useState<ReadonlySet<string>>(new Set());
  const toggle = (key: string) => {
    const next = new Set(revealed);
    if (!next.delete(key)) next.add(key);
    setRevealed(next);
  };
  const [copied, setCopied] = useState<string | null>(null);
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
  const known = new Set(TYPE_FIELDS[item.type].map((f) => f.key));
  const urls = itemUrls(item);
  const secret = (key: string, label: string, value: string) => (
    <div key={key}>
      <dt>{label}</dt>
      <dd>
        <code data-testid={key}>{revealed.has(key) ? value : "••••••••••••"}</code>{" "}
        <button
          type="button"
          class="secondary"
          aria-pressed={revealed.has(key)}
          aria-label={`${revealed.has(key) ? "Hide" : "Reveal"} ${label.toLowerCase()}`}
          onClick={() => toggle(key)}
        >
          {revealed.has(key) ? "Hide" : "Reveal"}
        </button>{" "}
        <button type="button" class="secondary" onClick={() => void copy(value, label.toLowerCase())}>
          Copy {label.toLowerCase()}
        </button>
      </dd>
    </div>
  );
  return (
    <div class="card" aria-label={`Item ${item.name}`} role="region">
      <h3>
        {item.favorite && <span aria-label="Favourite">★ </span>}
        {item.name} <span class="meta">{TYPE_LABELS[item.type]}</span>
      </h3>
      <dl>
        {TYPE_FIELDS[item.type].map((f) => {
          const value = item.fields[f.key];
          if (value === undefined) return null;
          if (f.secret) return secret(f.key, f.label, value);
          return (
            <div key={f.key}>
              <dt>{f.label}</dt>
              <dd class={f.multiline ? "multiline" : undefined}>
                <span data-testid={f.key}>{value}</span>{" "}
                {!f.multiline && (
                  <button type="button" class="secondary" onClick={() => void copy(value, f.label.toLowerCase())}>
                    Copy {f.label.toLowerCase()}
                  </button>
                )}
              </dd>
            </div>
          );
        })}
        {urls.map((u, n) => {
          const href = openableUrl(u.url);
          return (
            <div key={`url-${n}`}>
              <dt>{n === 0 ? "website" : `website ${n + 1}`}</dt>
              <dd>
                {href ? (
                  <a href={href} target="_blank" rel="noopener noreferrer">
                    {u.url}
                  </a>
                ) : (
                  <span title="Not a web address: not opened from here">{u.url}</span>
                )}
                {u.match !== "domain" && <span class="meta"> · matches: {u.match}</span>}
              </dd>
            </div>
          );
        })}
        {item.totp && <OneTimeCode seed={item.totp} onCopy={(code) => void copy(code, "one-time code")} />}
        {Object.entries(item.fields)
          .filter(([k]) => !known.has(k) && k !== "url")
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd class="multiline">{v}</dd>
            </div>
          ))}
        {(item.custom ?? []).map((c, n) =>
          c.hidden ? (
            secret(`custom-${n}`, c.name, c.value)
          ) : (
            <div key={`custom-${n}`}>
              <dt>{c.name}</dt>
              <dd class="multiline">{c.value}</dd>
            </div>
          ),
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

/** A login's current one-time code, its seconds left counting down; the TOTP code is loaded when an item has a seed. */
function OneTimeCode({ seed, onCopy }: { seed: string; onCopy(code: string): void }) {
  const [now, setNow] = useState<TotpCode | { problem: string } | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    void import("../../../../sdk/totp").then(({ totpCode }) => {
      const tick = () => {
        if (stopped) return;
        try {
          setNow(totpCode(seed));
        } catch (err) {
          return setNow({ problem: (err as Error).message });
        }
        timer = setTimeout(tick, 1000 - (Date.now() % 1000));
      };
      tick();
    });
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [seed]);
  return (
    <div>
      <dt>one-time code</dt>
      <dd>
        {now === null ? (
          "…"
        ) : "problem" in now ? (
          <span class="error">The seed does not give codes: {now.problem}</span>
        ) : (
          <>
            <code data-testid="totp">{now.code}</code>{" "}
            <span class="meta" data-testid="totp-remaining">
              {now.remaining} s left
            </span>{" "}
            <button type="button" class="secondary" onClick={() => onCopy(now.code)}>
              Copy code
            </button>
          </>
        )}
      </dd>
    </div>
  );
}
