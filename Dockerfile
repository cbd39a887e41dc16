# syntax=docker/dockerfile:1
# The Basin image: `basin serve` by default, and the image of the Kubernetes executor's Jobs
# (`basin worker --transfer <id>`), so it is built with --features kubernetes
# (docs/deployment.md, "Where transfers run").
#
#   docker build -t basin .
#   docker run -p 8080:8080 -v basin-data:/var/lib/basin basin

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# The registry and target folders are cache mounts, so a rebuild compiles only what changed;
# the binary is copied out of the target cache in the same step.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p basin --features kubernetes \
    && install -D target/release/basin /out/basin

FROM debian:bookworm-slim
# ca-certificates: TLS to object stores, OIDC providers, the Kubernetes API and URL imports.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# A fixed non-root user: the Jobs' pods run as 10001 with fsGroup 10001
# (crates/server/src/transfers/execution/kubernetes/manifest.rs, IMAGE_USER_ID).
RUN groupadd --gid 10001 basin \
    && useradd --uid 10001 --gid 10001 --home-dir /var/lib/basin --no-create-home --shell /usr/sbin/nologin basin \
    && install -d -o basin -g basin /var/lib/basin
COPY --from=build /out/basin /usr/local/bin/basin
USER 10001:10001
WORKDIR /var/lib/basin
ENV BASIN_DATA_DIR=/var/lib/basin
VOLUME ["/var/lib/basin"]
EXPOSE 8080
ENTRYPOINT ["basin"]
CMD ["serve", "--listen", "0.0.0.0:8080"]
