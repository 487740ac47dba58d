/** The offscreen document's one task: empty the clipboard when the service worker asks (background/clipboard.ts). */
chrome.runtime.onMessage.addListener((message: { target?: string; kind?: string }, sender, reply) => {
  if (message.target !== "offscreen" || sender.id !== chrome.runtime.id || message.kind !== "clear-clipboard") return;
  // A copy needs a selection to start from; the copy event then puts an empty text in its place.
  const field = document.createElement("textarea");
  field.value = "-";
  document.body.append(field);
  field.select();
  const empty = (event: ClipboardEvent) => {
    event.clipboardData?.setData("text/plain", "");
    event.preventDefault();
  };
  document.addEventListener("copy", empty, { once: true });
  const cleared = document.execCommand("copy");
  field.remove();
  reply({ cleared });
});
