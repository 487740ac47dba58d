/** An item's website as the clients complete and open it (sdk/items.ts): typed without a scheme, and never opened unless http(s). */
import { completeItemUrl, openableUrl } from "../../../sdk";

test.each<[string, string | undefined]>([
  ["github.com", "https://github.com"],
  ["  github.com/acme  ", "https://github.com/acme"],
  ["http://intranet.local", "http://intranet.local"],
  ["ssh://git@github.com", "ssh://git@github.com"],
  ["   ", undefined],
])("%j is stored as %j", (typed, stored) => {
  expect(completeItemUrl(typed)).toBe(stored);
});

test.each<[string | undefined, string | undefined]>([
  ["github.com", "https://github.com/"],
  ["https://github.com/acme?tab=1", "https://github.com/acme?tab=1"],
  ["http://intranet.local", "http://intranet.local/"],
  ["javascript:alert(1)", undefined],
  ["JavaScript:alert(1)", undefined],
  ["data:text/html,<script>alert(1)</script>", undefined],
  ["file:///etc/passwd", undefined],
  ["ssh://git@github.com", undefined],
  ["https://", undefined],
  [undefined, undefined],
])("%j opens as %j", (stored, opened) => {
  expect(openableUrl(stored)).toBe(opened);
});
