# posenc-proxy image: Debian 12's HAProxy 2.6 with deploy/haproxy/haproxy.cfg
# (consistent hash of x-posenc-table over the posenc replicas): classic
# builder, debian:bookworm-slim, Debian packages only. docker/compose.yaml
# builds it; by hand, from the repo root (the context is the one
# .dockerignore leaves for docker/Dockerfile too; this copies only the
# config):
#   docker build -f docker/haproxy.Dockerfile -t posenc-proxy:latest .
# Configure with POSENC_PROXY_BIND and POSENC_1..POSENC_3 (host:port).
FROM debian:bookworm-slim

RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends haproxy >/dev/null \
 && rm -rf /var/lib/apt/lists/*

COPY deploy/haproxy/haproxy.cfg /etc/haproxy/posenc.cfg
RUN haproxy -v | head -1

ENV POSENC_PROXY_BIND=0.0.0.0:50051
USER haproxy
EXPOSE 50051
# SIGUSR1: soft stop (stop listening, finish the streams in flight).
STOPSIGNAL SIGUSR1
ENTRYPOINT ["haproxy", "-db", "-f", "/etc/haproxy/posenc.cfg"]
