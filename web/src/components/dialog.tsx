/**
 * A modal dialog on the browser's own `<dialog>`: it keeps focus inside while open, Escape closes
 * it, and focus returns to what opened it. The content decides when it closes (`onClose`).
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

export function Dialog({ label, onClose, children }: { label: string; onClose(): void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement as HTMLElement | null;
    dialog?.showModal();
    return () => {
      dialog?.close();
      opener?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      aria-label={label}
      onCancel={(e) => {
        // Escape: the content's own cancel (it may ask first), not the browser's close.
        e.preventDefault();
        onClose();
      }}
    >
      {children}
    </dialog>
  );
}
