# docproc: Node 20 on Debian 12 with LibreOffice Writer (full package, not -nogui), its
# python3-uno bridge, bubblewrap (LibreOffice's jail), and metric-compatible fonts so page counts match Word's.
FROM node:20-bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libreoffice-writer libreoffice-calc libreoffice-impress python3-uno bubblewrap \
      fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation fonts-liberation2 fonts-dejavu fonts-noto-core \
      ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workers ./workers
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 DATA_DIR=/data
RUN useradd --system --uid 10001 --create-home --home-dir /home/docproc docproc && mkdir -p /data && chown docproc /data
USER docproc
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s CMD node -e "fetch('http://127.0.0.1:3000/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/server.js"]
