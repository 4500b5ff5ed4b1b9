# The convy GitHub Action's image (action.yml: runs.using docker). The base is pinned by digest
# (python:3.11.15-slim-bookworm); update the tag and the digest together, deliberately.
# The runner starts the container as root with --workdir /github/workspace, so nothing here relies
# on the image's user or working directory, and the entry point is an absolute path.
FROM python:3.11.15-slim-bookworm@sha256:d29f48a31a8b408ed19272ca1e7b10ebae13b240a27e862d3d4217c528e2e0c3

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

# Every dependency — the runtime ones, the otel extra's (otlp-endpoint) and setuptools/wheel to build
# the package — at the version and with the hashes of requirements.lock (regenerate it with the
# command at its top), wheels only, so two jobs always run the same code. Its own layer: it changes only when the lock does.
COPY requirements.lock /opt/convy-action/requirements.lock
RUN python -m pip install --no-cache-dir --require-hashes --only-binary=:all: \
        -r /opt/convy-action/requirements.lock

# The package itself, built from the source with what the lock installed: nothing more is fetched.
# Only requirements.lock, pyproject.toml, README.md and src/ enter the build (.dockerignore).
COPY pyproject.toml README.md /opt/convy-action/
COPY src/ /opt/convy-action/src/
RUN python -m pip install --no-cache-dir --no-index --no-deps --no-build-isolation /opt/convy-action \
    && rm -rf /opt/convy-action \
    && python -c "import convy_action, convy.demo.servers, opentelemetry.exporter.otlp.proto.http.trace_exporter"

ENTRYPOINT ["/usr/local/bin/python", "-m", "convy_action"]
