# The service image used by docker-compose.yml.
FROM node:20-bookworm-slim
WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary matches.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
ENV DATA_DIR=/data
VOLUME /data
EXPOSE 4800 4810 4811
CMD ["npm", "start"]
