/**
 * The gateway's aliases are matched in moleculer-web's order (the first match wins), made without
 * `localeCompare` (mixins/gateway.mixin.ts `aliasOrder`): the same order as moleculer-web's own
 * `optimizeAliasesOrder` for every route of the interface, across the parsed and the streamed routes.
 */
import { randomBytes } from "node:crypto";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { aliasOrder, gatewayMixin } from "../../../mixins/gateway.mixin";
import { ROUTES } from "../../../lib/http/routes";
import { loadConfig } from "../../../lib/config";
import { AccessTokens } from "../../../lib/auth/access-tokens";

type Alias = { method: string; path: string };
const keyOf = (a: Alias) => `${a.method} ${a.path}`;

/** moleculer-web's own ordering, run on a copy. */
function moleculerWebOrder(aliases: readonly Alias[]): string[] {
  const holder = { aliases: [...aliases] };
  (ApiGateway as unknown as { methods: { optimizeAliasesOrder(this: typeof holder): void } }).methods.optimizeAliasesOrder.call(holder);
  return holder.aliases.map(keyOf);
}

test("the gateway's aliases stand in moleculer-web's order, every route of the interface once", async () => {
  const config = loadConfig({ JWT_SECRET: randomBytes(32).toString("base64"), LOG_LEVEL: "error" });
  const broker = new ServiceBroker({ logger: false });
  // Its first call loads ICU's collator: no part of the gateway's set-up makes it.
  const localeCompare = jest.spyOn(String.prototype, "localeCompare");
  const api = broker.createService({
    name: "api",
    mixins: [gatewayMixin(config, new AccessTokens({ current: randomBytes(32) }, 60), ROUTES)],
    settings: { server: false },
  } as ServiceSchema) as unknown as { aliases: Alias[] };
  const compared = localeCompare.mock.calls.length;
  localeCompare.mockRestore();
  try {
    expect(compared).toBe(0);
    // No action adds, removes or lists routes at run time: the route table is the gateway's.
    const actions = Object.keys((api as unknown as { actions: Record<string, unknown> }).actions);
    expect(actions).toContain("rest");
    expect(actions.filter((a) => ["listAliases", "addRoute", "removeRoute"].includes(a))).toEqual([]);
    const actual = api.aliases.map(keyOf);
    expect(actual).toEqual(moleculerWebOrder(api.aliases));
    // moleculer-web keeps each alias's path without its slashes at either end.
    const listed = ROUTES.map((r) => `${r.method} ${r.path.replace(/^\/+|\/+$/g, "")}`);
    expect([...actual].sort()).toEqual([...listed].sort());
    // Not the order the table lists them in: the sort is what puts them there.
    expect(actual).not.toEqual(listed);
  } finally {
    await broker.stop();
  }
});

test("aliasOrder: more segments first, then fewer parameters, then by path", () => {
  const paths = ["/a/:x", "/a/b/c", "/a/:x/c", "/a/b/:y", "/b", "/a/b"];
  const sorted = paths.map((path) => ({ method: "GET", path })).sort(aliasOrder);
  expect(sorted.map((a) => a.path)).toEqual(["/a/b/c", "/a/:x/c", "/a/b/:y", "/a/b", "/a/:x", "/b"]);
  expect(sorted.map(keyOf)).toEqual(moleculerWebOrder(paths.map((path) => ({ method: "GET", path }))));
});
