/**
 * A dishonest server between a real client and the real service: a `fetch` that lets `edit`
 * rewrite the service's genuine JSON answers (or answer with a status of its own choosing) and
 * records what the client sends.
 */
/** May answer at once or after looking things up (a promise); `query` is the request's `?...`, or "". */
export type Edit = (method: string, path: string, body: any, query: string) => any;

export interface Sent {
  method: string;
  path: string;
}

/** An answer the dishonest server gives whatever the service said. */
export class Answer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export function dishonest(edit: Edit, sent: Sent[] = []): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input));
    const path = url.pathname.replace(/^\/api\/v1/, "");
    const method = init?.method ?? "GET";
    sent.push({ method, path });
    const res = await fetch(input, init);
    const text = await res.text();
    const edited = await edit(method, path, text ? JSON.parse(text) : undefined, url.search);
    if (edited instanceof Answer) return Response.json(edited.body, { status: edited.status });
    if (!text) return new Response(null, { status: res.status, headers: res.headers });
    return new Response(JSON.stringify(edited), { status: res.status, headers: res.headers });
  };
}

/** What the client sent that would change a vault. */
export const writesTo = (sent: Sent[], vaultId: string) =>
  sent.filter((s) => s.method !== "GET" && s.path.startsWith(`/vaults/${vaultId}`));
