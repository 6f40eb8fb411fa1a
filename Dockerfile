# The service image used by docker-compose.yml: the compiled service (`npm run build`, service/build.ts)
# run by node alone, without npm, a shell or the TypeScript loader in the running container.
# test/e2e/compiledService.e2e.spec.ts runs the same steps: the build, production packages only, node dist/main.js.

# Production packages only; better-sqlite3 builds from source when no prebuilt binary matches.
FROM node:20-bookworm-slim AS packages
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev

# The build, with the dev packages (esbuild, tsx).
FROM packages AS build
RUN npm ci
COPY . .
RUN npm run build

# The image: the production packages and the compiled service, no compilers.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json ./
COPY --from=packages /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
ENV DATA_DIR=/data
# Stack traces name the TypeScript source (dist/*.js.map).
ENV NODE_OPTIONS=--enable-source-maps
VOLUME /data
EXPOSE 4800 4802 4810 4811
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]
