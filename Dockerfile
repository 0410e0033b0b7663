# browserai-temporal: one image for the Temporal worker (default command) and the BrowserAI
# emulator (`node lib/src/emulator/main.js`), used by docker-compose.yml.
#
#   docker build -t browserai-temporal .
#   docker run --rm -e TEMPORAL_ADDRESS=host:7233 -e BROWSERAI_API_TOKEN=... browserai-temporal
#
# Node 24 comes from the base image. The `node` devDependency (the Node binary `npm run` puts first
# on PATH) is only used while building and is pruned with the other devDependencies.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: install everything, compile TypeScript, bundle the workflows, then drop devDependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first, so source edits reuse this layer: exactly the lockfile (`npm ci`; it lists
# @swc/core's builds for every platform, see .ci/run). `--ignore-scripts` then `npm rebuild`: the
# dependencies' install scripts run (the `node` devDependency fetches its binary, @swc/core, the
# workflow bundler, checks its native binding) but not our own `prepare`, which builds the package
# and needs the sources that only the next layer brings.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild

# Only the worker/emulator sources and the bundle script are compiled; test/ and bench/ are not in
# the build context.
COPY tsconfig.json ./
COPY src ./src
COPY scripts/build-workflow-bundle.ts ./scripts/
# The workflow bundle is built once here, so a worker loads it (WORKER_WORKFLOW_BUNDLE, below)
# instead of running webpack at every start.
# The @temporalio/* packages are peerDependencies of the package and devDependencies of this
# repository, so `npm prune --omit=dev` would drop them: for this image only, package.json makes
# them plain dependencies (the lockfile's exact versions, already installed) while pruning, and is
# put back afterwards.
RUN npm run build \
 && node lib/scripts/build-workflow-bundle.js lib/workflow-bundle.js \
 && cp package.json /tmp/package.json \
 && node -e "const fs = require('fs'); const p = require('./package.json'); \
      for (const name of Object.keys(p.peerDependencies)) { p.dependencies[name] = p.devDependencies[name]; delete p.devDependencies[name]; } \
      fs.writeFileSync('package.json', JSON.stringify(p, null, 2));" \
 && npm prune --omit=dev --offline --no-audit --no-fund \
 && cp /tmp/package.json package.json \
 && test ! -e node_modules/node \
 && test ! -e node_modules/typescript \
 && node -e "for (const name of Object.keys(require('./package.json').peerDependencies)) require.resolve(name + '/package.json')" \
 && test -f lib/src/worker.js \
 && test -f lib/src/emulator/main.js \
 && test -f lib/workflow-bundle.js

# ---- runtime: compiled JavaScript and production dependencies only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app

# Owned by root and read-only for the runtime user: the process needs no write access here
# (the workflow bundle was built above; the worker only reads it).
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/lib ./lib

# Workers load the prebuilt workflow bundle (src/workflow-bundle.ts) instead of bundling lib/src/workflows
# at start-up. Set it empty to bundle at start-up again.
ENV WORKER_WORKFLOW_BUNDLE=/app/lib/workflow-bundle.js

# Two glibc malloc arenas instead of up to 8 per core: the worker's Rust core and Node allocate from
# many threads, and the extra arenas held memory no thread used. Blocks of 128 KiB and more go
# straight back to the system (a fixed threshold: glibc's own grows with use and then keeps freed
# memory). Set them empty for glibc's defaults. docs/design/memory.md; BENCHMARKS.md, "Scale".
ENV MALLOC_ARENA_MAX=2
ENV MALLOC_MMAP_THRESHOLD_=131072

# The `node` user (uid 1000) ships with the official Node images.
USER node

# The worker drains on SIGTERM (Worker.run() stops polling and gives running activities
# WORKER_SHUTDOWN_GRACE_MS); the emulator closes its server on SIGTERM too.
STOPSIGNAL SIGTERM
# V8 grows each heap (the main thread's, the workflow thread's) by 30 % over what a full GC left live
# instead of up to 4x, with young generations of at most 8 MB: the same CPU, far less RSS
# (docs/design/memory.md, "The four settings"). The flags cannot go in NODE_OPTIONS;
# dev/worker-child.ts and `npm run worker` use the same.
CMD ["node", "--heap-growing-percent=30", "--max-semi-space-size=8", "lib/src/worker.js"]
