# syntax=docker/dockerfile:1
# The one syncflow image: watch, worker, beat, Flower (and, with the devcluster extra, the demo) all
# run from it; only the command differs. Build from the repository root:
#   docker build -t syncflow .                                          # runtime, Flower, console
#   docker build --build-arg EXTRAS=flower,console,demo -t syncflow .   # + devcluster and the demo
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY syncflow ./syncflow
ARG EXTRAS=flower,console
RUN python -m venv /opt/syncflow \
    && /opt/syncflow/bin/pip install --no-compile "/src[${EXTRAS}]" \
    && /opt/syncflow/bin/python -m compileall -q /opt/syncflow/lib

FROM ${PYTHON_IMAGE}
# The version is syncflow.__version__ (syncflow --version); tag the image with it.
LABEL org.opencontainers.image.title="syncflow" \
      org.opencontainers.image.description="Keeps Kubernetes objects in sync between kcp workspaces and service clusters, on Celery workers over Redis." \
      org.opencontainers.image.licenses="Apache-2.0"
# A numeric non-root user; its state directory (beat's schedule) exists and is owned by it, so a
# volume mounted there starts out writable too.
RUN groupadd --system --gid 10001 syncflow \
    && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/syncflow --shell /usr/sbin/nologin syncflow \
    && install -d -o 10001 -g 10001 -m 0750 /var/lib/syncflow \
    && install -d -o root -g 10001 -m 0750 /etc/syncflow
COPY --from=build /opt/syncflow /opt/syncflow
ENV PATH=/opt/syncflow/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/var/lib/syncflow \
    XDG_STATE_HOME=/var/lib \
    SYNCFLOW_BEAT_SCHEDULE=/var/lib/syncflow/beat-schedule \
    SYNCFLOW_LOG_FORMAT=json
USER 10001:10001
WORKDIR /var/lib/syncflow
# Asks /healthz on SYNCFLOW_HEALTH_ADDRESS; a process started without one is watched by its exit only.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-m", "syncflow.probe", "/healthz"]
# SIGTERM: the watcher releases its Lease; a worker shuts down warm (running tasks finish, reserved
# messages go back to Redis). Give pods a grace period above task_time_limit (60 s by default).
STOPSIGNAL SIGTERM
ENTRYPOINT ["syncflow"]
CMD ["--help"]
