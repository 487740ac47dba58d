/** Hands bytes to the browser as a file download under `name`, without leaving the page (an export, a file on an item). */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  // Long enough for the browser to start saving even a large file; then the bytes can go.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
