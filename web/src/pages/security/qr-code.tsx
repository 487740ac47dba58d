/**
 * A QR code as an inline <svg> element: no canvas, no inline style and no image URL, so nothing
 * the page's CSP would have to allow. lean-qr is imported here, when a code is first shown, so it
 * is a chunk of its own that only someone adding an authenticator app downloads, not part of the
 * first page.
 */
import { useEffect, useState } from "preact/hooks";

/** The light margin readers need around the code, four modules wide (ISO/IEC 18004). */
const QUIET_ZONE = 4;
/** Screen pixels a module: an otpauth address makes a code of about 200 px, which fits a phone's screen too. */
const MODULE_PX = 4;

/** A chunk that fails to load leaves no code; the address and secret shown with it can still be typed. */
const noCode = () => undefined;

export function QrCode({ text, label }: { text: string; label: string }) {
  const [code, setCode] = useState<{ text: string; size: number; outline: string } | null>(null);
  useEffect(() => {
    let shown = true;
    void Promise.all([import("lean-qr"), import("lean-qr/extras/svg")]).then(([{ generate, correction }, { toSvgPath }]) => {
      // Level M survives a glare or a smudged screen and still fits an otpauth address in a small code.
      const qr = generate(text, { minCorrectionLevel: correction.M });
      if (shown) setCode({ text, size: qr.size, outline: toSvgPath(qr) });
    }, noCode);
    return () => {
      shown = false;
    };
  }, [text]);
  // A code for an earlier text would enrol the wrong secret: nothing is drawn until this one is.
  if (code?.text !== text) return null;
  const side = code.size + 2 * QUIET_ZONE;
  return (
    <svg
      role="img"
      aria-label={label}
      viewBox={`${-QUIET_ZONE} ${-QUIET_ZONE} ${side} ${side}`}
      width={side * MODULE_PX}
      height={side * MODULE_PX}
      shape-rendering="crispEdges"
    >
      <rect x={-QUIET_ZONE} y={-QUIET_ZONE} width={side} height={side} fill="#fff" />
      <path d={code.outline} fill="#000" />
    </svg>
  );
}
