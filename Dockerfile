# histd container: Debian 12, gRPC/protobuf/Abseil from Debian, CUDA from NVIDIA's Debian 12
# repository (build stage only: the runtime is linked statically; the GPU driver comes from
# the NVIDIA container toolkit at run time).
#   docker build -t histd .                       # CUDA engine for sm_90 (H100/H200)
#   docker build --build-arg HISTD_CUDA=0 -t histd-cpu .   # CPU engine only
#   docker run --gpus all -p 7440:7440 -p 9440:9440 -v $PWD/tls:/etc/histd/tls:ro histd \
#     --tls_cert=/etc/histd/tls/tls.crt --tls_key=/etc/histd/tls/tls.key \
#     --auth_tokens_file=/etc/histd/tls/tokens          # docs/security.md
ARG DEBIAN_IMAGE=debian:12
FROM ${DEBIAN_IMAGE} AS build
ARG HISTD_CUDA=1
ARG CUDA_VERSION_DASHED=13-0
ARG CMAKE_CUDA_ARCHITECTURES=90
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY deploy/install-deps.sh /src/deploy/install-deps.sh
RUN bash /src/deploy/install-deps.sh
RUN if [ "$HISTD_CUDA" = 1 ]; then \
      apt-get install -y -qq --no-install-recommends curl && \
      curl -fsSL -o /tmp/keyring.deb \
        https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb && \
      dpkg -i /tmp/keyring.deb && apt-get update -qq && \
      apt-get install -y -qq --no-install-recommends cuda-nvcc-${CUDA_VERSION_DASHED} \
        cuda-cudart-dev-${CUDA_VERSION_DASHED} cuda-cccl-${CUDA_VERSION_DASHED} \
        libcublas-dev-${CUDA_VERSION_DASHED} && rm -rf /var/lib/apt/lists/*; \
    fi
COPY . /src
RUN HISTD_BUILD_DIR=/build HISTD_BUILD_TARGETS="histd histctl" \
    HISTD_CMAKE_ARGS="-DHISTD_WITH_CUDA=$([ "$HISTD_CUDA" = 1 ] && echo ON || echo OFF)" \
    CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES} PATH=/usr/local/cuda/bin:$PATH \
    bash /src/deploy/build.sh

FROM ${DEBIAN_IMAGE}
COPY deploy/install-deps.sh /opt/histd/install-deps.sh
# A fixed uid/gid (10001) so that volumes can be made writable for it (Kubernetes: fsGroup).
RUN bash /opt/histd/install-deps.sh --runtime && rm -rf /var/lib/apt/lists/* && \
    groupadd --system --gid 10001 histd && \
    useradd --system --uid 10001 --gid histd --no-create-home histd && \
    install -d -o histd -g histd /var/lib/histd
COPY --from=build /build/server/histd /build/client/histctl /usr/local/bin/
USER histd
# 7440: gRPC; 9440: the HTTP endpoint (/metrics, /healthz, /readyz).
EXPOSE 7440 9440
# Where --snapshot_path should point to keep histograms across container restarts.
VOLUME /var/lib/histd
# Containers listen on every interface (the binary's own default is loopback), so the daemon
# refuses to start until it is given TLS and/or tokens, or --allow_insecure (docs/security.md).
ENTRYPOINT ["/usr/local/bin/histd", "--address=0.0.0.0:7440", "--http_address=0.0.0.0:9440"]
