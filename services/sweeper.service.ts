/**
 * The sweeper: every SWEEP_INTERVAL (and shortly after start), purges invites never used,
 * INVITE_RETENTION after their expiry, expired or revoked refresh tokens, and items TRASH_RETENTION in a trash (lib/workers/sweeper.ts); one node at a time across the deployment.
 */
import type { ServiceSchema } from "moleculer";
import type { Runtime } from "../lib/runtime";
import { sweepOnce, type SweepOutcome } from "../lib/workers/sweeper";
import { runnerService } from "../app/node-runtime";

const FIRST_SWEEP_MS = 5_000;
/** A sweeper that dies mid-sweep keeps the others out at most this long. */
const LEASE_MS = 5 * 60_000;

export function sweeperService({ store, locks, config }: Runtime): ServiceSchema {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const policy = { leaseMs: LEASE_MS, inviteRetentionMs: config.inviteRetentionMs, trashRetentionMs: config.trashRetentionMs };
  return {
    name: "sweeper",
    actions: {
      /** For operators (REPL: `call sweeper.sweep`): one sweep now. */
      sweep: {
        async handler(): Promise<SweepOutcome> {
          return sweepOnce(store, locks, policy);
        },
      },
    },
    async started() {
      const log = this.logger;
      const tick = () => {
        if (running) return;
        running = sweepOnce(store, locks, policy)
          .then(
            (outcome) => {
              if (outcome.ran && outcome.invites + outcome.refreshTokens + outcome.sessions > 0) {
                log.info(
                  `swept ${outcome.invites} expired invites, ${outcome.refreshTokens} expired or revoked refresh tokens and ${outcome.sessions} ended sessions`,
                );
              }
            },
            (err: Error) => log.warn(`sweep failed (${err.name}); next one in ${config.sweepIntervalMs} ms`),
          )
          .finally(() => {
            running = undefined;
            if (stopped) return;
            timer = setTimeout(tick, config.sweepIntervalMs);
            timer.unref();
          });
      };
      timer = setTimeout(tick, Math.min(FIRST_SWEEP_MS, config.sweepIntervalMs));
      timer.unref();
    },
    async stopped() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(sweeperService);
