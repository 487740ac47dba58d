/**
 * One item shown: its type's fields, websites, one-time code, passkeys and custom fields, each
 * secret masked until revealed, copied to the clipboard and cleared; then its files (files.tsx).
 */
import { useEffect, useState } from "preact/hooks";
import type { ComponentChildren, VNode } from "preact";
import { itemUrls, openableUrl, TYPE_FIELDS, TYPE_LABELS, type Item, type TotpCode, type TypeField } from "../../../../sdk";
import { clipboardClearMs } from "../../session";
import { isArchived, itemTags } from "../../library";
import { PasskeyRows } from "../../components/passkeys";
import { ItemFiles } from "./files-lazy";

interface ItemViewProps {
  item: Item;
  onEdit?(): void;
  onDelete?(): void;
  onFilesChanged?(): void;
  children?: ComponentChildren;
}

/**
 * Edit and Delete show where the item's vault is open; elsewhere `children` (a link to it) takes
 * their place. With `onFilesChanged` files are attached and removed here too (told after each).
 */
export function ItemView({ item, onEdit, onDelete, onFilesChanged, children }: ItemViewProps) {
  const { revealed, toggle } = useRevealed();
  const { copied, copy } = useClipboard();
  const secret = (key: string, label: string, value: string) => (
    <SecretRow key={key} id={key} label={label} value={value} revealed={revealed.has(key)} onToggle={() => toggle(key)} onCopy={copy} />
  );
  return (
    <div class="card" aria-label={`Item ${item.name}`} role="region">
      <h3>
        {item.favorite && <span aria-label="Favourite">★ </span>}
        {item.name} <span class="meta">{TYPE_LABELS[item.type]}</span>
        {isArchived(item) && <span class="meta"> · archived</span>}
      </h3>
      <dl>
        {TYPE_FIELDS[item.type].map((f) => {
          const value = item.fields[f.key];
          if (value === undefined) return null;
          if (f.secret) return secret(f.key, f.label, value);
          return <PlainRow key={f.key} field={f} value={value} onCopy={copy} />;
        })}
        <Websites item={item} />
        {item.totp && <OneTimeCode seed={item.totp} onCopy={(code) => void copy(code, "one-time code")} />}
        {item.passkeys && <PasskeyRows passkeys={item.passkeys} />}
        <OtherFields item={item} secret={secret} />
        <TagsRow item={item} />
      </dl>
      <ItemFiles item={item} {...(onFilesChanged && { onChanged: onFilesChanged })} />
      {copied && (
        <p role="status" class="note">
          {copied}
        </p>
      )}
      <p class="meta">
        Revision {item.revision} · changed {new Date(item.updatedAt).toLocaleString()}
      </p>
      {onEdit && (
        <button type="button" onClick={onEdit}>
          Edit
        </button>
      )}{" "}
      {onDelete && (
        <button type="button" class="danger" onClick={onDelete}>
          Delete
        </button>
      )}
      {children}
    </div>
  );
}

/** Which secrets of the item are shown. */
function useRevealed() {
  const [revealed, setRevealed] = useState<ReadonlySet<string>>(new Set());
  const toggle = (key: string) => {
    const next = new Set(revealed);
    if (!next.delete(key)) next.add(key);
    setRevealed(next);
  };
  return { revealed, toggle };
}

/** The item's tags, each a link to the list of items with it. */
function TagsRow({ item }: { item: Item }) {
  if (itemTags(item).length === 0) return null;
  return (
    <div>
      <dt>Tags</dt>
      <dd>
        {itemTags(item).map((t) => (
          <a key={t} class="tag" href={`#/items/tag/${encodeURIComponent(t)}`}>
            {t}
          </a>
        ))}
      </dd>
    </div>
  );
}

type Copy = (value: string, what: string) => Promise<void>;

/** Copying a value to the clipboard, which is cleared after a while; what happened, in a sentence. */
function useClipboard(): { copied: string | null; copy: Copy } {
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
  return { copied, copy };
}

/** A secret: masked until revealed, and copied without being shown. */
function SecretRow(props: { id: string; label: string; value: string; revealed: boolean; onToggle(): void; onCopy: Copy }) {
  const { id, label, value, revealed } = props;
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        <code data-testid={id}>{revealed ? value : "••••••••••••"}</code>{" "}
        <button
          type="button"
          class="secondary"
          aria-pressed={revealed}
          aria-label={`${revealed ? "Hide" : "Reveal"} ${label.toLowerCase()}`}
          onClick={props.onToggle}
        >
          {revealed ? "Hide" : "Reveal"}
        </button>{" "}
        <button type="button" class="secondary" onClick={() => void props.onCopy(value, label.toLowerCase())}>
          Copy {label.toLowerCase()}
        </button>
      </dd>
    </div>
  );
}

function PlainRow({ field: f, value, onCopy }: { field: TypeField; value: string; onCopy: Copy }) {
  return (
    <div>
      <dt>{f.label}</dt>
      <dd class={f.multiline ? "multiline" : undefined}>
        <span data-testid={f.key}>{value}</span>{" "}
        {!f.multiline && (
          <button type="button" class="secondary" onClick={() => void onCopy(value, f.label.toLowerCase())}>
            Copy {f.label.toLowerCase()}
          </button>
        )}
      </dd>
    </div>
  );
}

/** A login's websites: a link each, opened apart from this page, unless it is not a web address. */
function Websites({ item }: { item: Item }) {
  return (
    <>
      {itemUrls(item).map((u, n) => {
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
    </>
  );
}

/** Fields no type shows (kept from an earlier release), then the person's own custom fields. */
function OtherFields({ item, secret }: { item: Item; secret(key: string, label: string, value: string): VNode }) {
  const known = new Set(TYPE_FIELDS[item.type].map((f) => f.key));
  return (
    <>
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
    </>
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
