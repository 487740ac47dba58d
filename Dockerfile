# One image for every service of the split deployment; SERVICES picks what a container runs.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json moleculer.config.ts ./
COPY app app
COPY bin bin
COPY build build
COPY lib lib
COPY services services
COPY mixins mixins
COPY protocol protocol
COPY sdk sdk
COPY cli cli
COPY web web
COPY bench bench
COPY deploy deploy
COPY test/helpers test/helpers
RUN npm run build

FROM node:24-slim
# OPS_PORT: every container answers probes (/livez, /readyz) and metrics there, apart from the API.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 OPS_PORT=9100
# How the server's process starts everywhere (lib/ops/start-flags.ts, README "Memory"): glibc
# gives large blocks (a login's 16 MiB scrypt) back to the system; V8's young generation stays small.
ENV MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist
USER node
HEALTHCHECK --interval=5s --timeout=3s --retries=5 CMD ["node", "-e", "fetch('http://127.0.0.1:9100/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# moleculer-runner with the project's broker options (moleculer.config.ts): every service, or SERVICES=a,b.
CMD ["node", "--max-semi-space-size=4", "--expose-gc", "node_modules/moleculer/bin/moleculer-runner.js", "--config", "dist/moleculer.config.js", "dist/services"]
