# browserai-temporal: one image for the Temporal worker (default command) and the BrowserAI
# emulator (`node lib/src/emulator/main.js`), used by docker-compose.yml.
#
#   docker build -t browserai-temporal .
#   docker run --rm -e TEMPORAL_ADDRESS=host:7233 -e BROWSERAI_API_TOKEN=... browserai-temporal
#
# Node 24 comes from the base image. The `node` devDependency (the Node binary `npm run` puts first
# on PATH) is only used while building and is pruned with the other devDependencies.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: install everything, compile TypeScript, then drop devDependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first, so source edits reuse this layer. Install scripts are needed: the `node`
# devDependency fetches its binary and @swc/core (the worker's workflow bundler) checks its native
# binding.
# `npm install` honours the lockfile; `npm ci` (npm 11) refuses it because it cannot list
# @swc/core's builds for other platforms (see .ci/run).
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm install --no-audit --no-fund

# Only the worker/emulator sources are compiled; test/ and bench/ are not in the build context.
COPY tsconfig.json ./
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && test ! -e node_modules/node \
 && test -f lib/src/worker.js \
 && test -f lib/src/emulator/main.js

# ---- runtime: compiled JavaScript and production dependencies only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app

# Owned by root and read-only for the runtime user: the process needs no write access here
# (the worker bundles its workflow code in memory).
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/lib ./lib

# The `node` user (uid 1000) ships with the official Node images.
USER node

# The worker drains on SIGTERM (Worker.run() stops polling and gives running activities
# WORKER_SHUTDOWN_GRACE_MS); the emulator closes its server on SIGTERM too.
STOPSIGNAL SIGTERM
CMD ["node", "lib/src/worker.js"]
