/**
 * Every answer of the API that a test receives through `fetch` (the tests' client, the SDK) is
 * checked against the OpenAPI document (test/helpers/openapi-check.ts); so is every answer the web
 * vault receives in Chromium (test/helpers/browser.ts). A test that saw an answer the document does
 * not allow fails, with the answer named, when it ends.
 */
import { checkAnswer, takeProblems } from "../helpers/openapi-check";

const fetchAsSent = globalThis.fetch;

globalThis.fetch = async function checkedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await fetchAsSent(input, init);
  const request = input instanceof Request ? input : undefined;
  const method = (init?.method ?? request?.method ?? "GET").toUpperCase();
  const url = request ? request.url : String(input);
  let text: string;
  try {
    text = await res.clone().text();
  } catch {
    return res; // the connection broke while the body was read: the test sees that itself
  }
  checkAnswer(method, url, res.status, text);
  return res;
};

afterEach(() => {
  const problems = takeProblems();
  if (problems.length === 0) return;
  throw new Error(`Answers that the OpenAPI document does not allow:\n  ${problems.slice(0, 20).join("\n  ")}`);
});
