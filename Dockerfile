# One image for every service of the split deployment; SERVICES picks what a container runs.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json moleculer.config.ts ./
COPY bin bin
COPY lib lib
COPY services services
COPY mixins mixins
COPY sdk sdk
COPY cli cli
COPY web web
COPY bench bench
COPY test/helpers test/helpers
RUN npm run build

FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist
USER node
CMD ["node", "dist/bin/server.js"]
