// A client holding a fixed pool of keep-alive connections to a gateway (undici's Agent, as Node's
// fetch uses it), sending bursts of requests with idle gaps, while the gateway or the client itself
// stalls. Run as its own process: a stalled client must not stall the test, nor the server.
// Usage: node keep-alive-client.mjs '<plan as JSON>'   Prints [{ round, sent, failed: [cause, ...] }] as JSON.
//
// The plan: { url, token, connections, burst, rounds: [round, ...] }; each round first fills the
// pool with one burst, then, by its kind:
//   { kind: "idle", idleMs }                          the client idles (its timers run), then sends a burst;
//   { kind: "client-stalled", stallMs }               the client's loop is blocked (a loaded machine, a
//                                                     long CPU step), then it sends a burst at once;
//   { kind: "server-stalled", pid, sendAtMs, resumeAtMs }  the gateway's process is stopped (SIGSTOP: a
//                                                     starved process), the client sends a burst while it
//                                                     is, and the gateway goes on (SIGCONT) later.
import { setTimeout as sleep } from "node:timers/promises";

const plan = JSON.parse(process.argv[2]);
const { fetch } = globalThis;

// Node's fetch does not export undici's classes: its global dispatcher, made at the first fetch, is an Agent.
await fetch(`${plan.url}/health`).then((r) => r.arrayBuffer());
const Agent = globalThis[Symbol.for("undici.globalDispatcher.1")].constructor;
const agent = new Agent({ connections: plan.connections });

/** `plan.burst` requests at once, half health checks and half reads with a token: the causes of those that failed. */
async function burst() {
  const one = (i) =>
    fetch(i % 2 ? `${plan.url}/health` : `${plan.url}/vaults`, {
      dispatcher: agent,
      headers: i % 2 ? {} : { authorization: `Bearer ${plan.token}` },
    }).then(async (res) => {
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`status ${res.status}`);
    });
  const settled = await Promise.allSettled(Array.from({ length: plan.burst }, (_, i) => one(i)));
  return settled.filter((s) => s.status === "rejected").map((s) => s.reason.cause?.message ?? s.reason.message);
}

async function round(r) {
  await burst();
  if (r.kind === "idle") {
    await sleep(r.idleMs);
    return burst();
  }
  if (r.kind === "client-stalled") {
    const until = Date.now() + r.stallMs;
    while (Date.now() < until); // the loop blocked: no timer of the pool runs, no socket is read
    return burst();
  }
  await sleep(100);
  process.kill(r.pid, "SIGSTOP");
  try {
    await sleep(r.sendAtMs - 100);
    const sent = burst();
    await sleep(r.resumeAtMs - r.sendAtMs);
    process.kill(r.pid, "SIGCONT");
    return await sent;
  } finally {
    process.kill(r.pid, "SIGCONT");
  }
}

const out = [];
for (const r of plan.rounds) out.push({ round: r, sent: plan.burst, failed: await round(r) });
await agent.close();
console.log(JSON.stringify(out));
