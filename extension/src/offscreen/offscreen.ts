/** The offscreen document's one task: empty the clipboard when the service worker asks (background/clipboard.ts). */
chrome.runtime.onMessage.addListener((message: { target?: string; kind?: string }, sender, reply) => {
  if (message.target !== "offscreen" || sender.id !== chrome.runtime.id || message.kind !== "clear-clipboard") return;
  const empty = (event: ClipboardEvent) => {
    event.clipboardData?.setData("text/plain", "");
    event.preventDefault();
  };
  document.addEventListener("copy", empty, { once: true });
  document.execCommand("copy");
  reply({ cleared: true });
});
