/** Small pieces every page uses: an action with its busy state and its error as a sentence. */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { sentence } from "../../../sdk";

export interface Action {
  busy: boolean;
  error: string | null;
  /** Runs `task`; its error becomes a sentence on the page (nothing fails silently). */
  run(task: () => Promise<void>): Promise<void>;
  clear(): void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return {
    busy,
    error,
    async run(task) {
      setBusy(true);
      setError(null);
      try {
        await task();
      } catch (err) {
        setError(sentence(err));
      } finally {
        setBusy(false);
      }
    },
    clear: () => setError(null),
  };
}

export function ErrorNote({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Busy({ label }: { label: string }) {
  return (
    <p class="busy" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

export function Field(props: { id: string; label: string; children: ComponentChildren; hint?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && <small id={`${props.id}-hint`}>{props.hint}</small>}
    </div>
  );
}

/** A form's submit button, off while its action runs (or while `disabled`). */
/**
 * A password typed into a form, with its label: `autocomplete` says which (the account's current
 * one, a new one the browser may offer to make, or one it should neither fill nor keep).
 */
export function PasswordField(props: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  onInput(value: string): void;
  autocomplete: "current-password" | "new-password" | "off";
  required?: boolean;
}) {
  return (
    <Field id={props.id} label={props.label} {...(props.hint && { hint: props.hint })}>
      <input
        id={props.id}
        type="password"
        autocomplete={props.autocomplete}
        required={props.required}
        value={props.value}
        onInput={(e) => props.onInput(inputValue(e))}
      />
    </Field>
  );
}

export function Submit(props: { busy: boolean; disabled?: boolean; children: ComponentChildren }) {
  return (
    <button type="submit" disabled={props.busy || props.disabled}>
      {props.children}
    </button>
  );
}

/** A labelled choice among `options` (`[value, label]`, or the value as its own label). */
export function Choice<T extends string>(props: {
  id: string;
  label: string;
  value: T;
  options: ReadonlyArray<NoInfer<T> | readonly [NoInfer<T>, string]>;
  onChange(value: NoInfer<T>): void;
}) {
  return (
    <Field id={props.id} label={props.label}>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(inputValue(e) as T)}>
        {props.options.map((o) => {
          const [value, label] = typeof o === "string" ? [o, o] : o;
          return (
            <option key={value} value={value}>
              {label}
            </option>
          );
        })}
      </select>
    </Field>
  );
}

/** Lets the browser paint (a status line) before a long synchronous step such as the KDF. */
export const nextPaint = () => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

export const inputValue = (e: Event) => (e.currentTarget as HTMLInputElement).value;
