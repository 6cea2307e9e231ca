#!/usr/bin/env bash
# README command 1: set up the embedded-default environment, build, run the demo.
#
#   atlas_crawl_bringup/scripts/setup_and_demo.sh [--quick] [--no-demo]
#
# 1. creates .venv in the repo root if missing (python3.11 -m venv; $PYTHON overrides),
# 2. pip-installs requirements/requirements.txt (exact pins) unless the venv already
#    holds exactly that file (sha256 stamp in .venv/.requirements.sha256),
# 3. rewrites the build-container paths in the ROS wheels' CMake files
#    (scripts/fix_wheel_paths.py; see ../shared/notes/ros2-jazzy-from-pypi.md),
# 4. sources scripts/env.sh and runs `colcon build --symlink-install` on the workspace,
# 5. runs `python -m atlas_crawl_bringup.demo [--quick]` (skipped with --no-demo).
# Idempotent: a second run only re-checks and does an incremental colcon build.
set -euo pipefail

QUICK=()
DEMO=1
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=(--quick) ;;
    --no-demo) DEMO=0 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "setup_and_demo.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="${ATLAS_CRAWL_VENV:-$ROOT/.venv}"
REQ="$ROOT/atlas_crawl_bringup/requirements/requirements.txt"
STAMP="$VENV/.requirements.sha256"
NICE=(nice -n "${ATLAS_CRAWL_NICE:-10}")
cd "$ROOT"
t_start=$SECONDS
NSTEPS=$(( DEMO ? 5 : 4 ))
STEP=0
log() { echo "[setup $(( SECONDS - t_start ))s] $*"; }
# step "title": a numbered line "[setup 12s] step 2/5: title" (elapsed time since the start)
step() { STEP=$(( STEP + 1 )); log "step $STEP/$NSTEPS: $*"; }
# with_heartbeat cmd...: run a silent command; on a terminal, redraw "... 42s" on one line meanwhile
# (no redraws when stdout is not a terminal, e.g. CI logs)
with_heartbeat() {
  if [ -t 1 ]; then
    "$@" & local pid=$! t0=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
      printf '\r[setup %ds] step %d/%d running ... %ds ' "$(( SECONDS - t_start ))" "$STEP" "$NSTEPS" \
        "$(( SECONDS - t0 ))"
      sleep 1
    done
    printf '\r\033[K'
    wait "$pid"
  else
    "$@"
  fi
}

# --- prerequisites that PyPI cannot provide --------------------------------------------
missing=()
for tool in cmake c++ make; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup_and_demo.sh: missing system tools: ${missing[*]}" >&2
  echo "  Debian 12: sudo apt install cmake g++ make python3-venv python3-dev" >&2
  exit 1
fi

# --- 1. venv ------------------------------------------------------------------------------
step "Python venv ($VENV)"
if [ ! -x "$VENV/bin/python" ]; then
  PY="${PYTHON:-}"
  if [ -z "$PY" ]; then
    if command -v python3.11 >/dev/null 2>&1; then PY=python3.11; else PY=python3; fi
  fi
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    echo "setup_and_demo.sh: need Python 3.11 (the ROS 2 Jazzy wheels are cp311); '$PY' is not." >&2
    echo "  set PYTHON=/path/to/python3.11" >&2
    exit 1
  fi
  log "creating venv $VENV with $("$PY" -c 'import sys; print(sys.executable)')"
  if ! "$PY" -m venv "$VENV"; then
    echo "setup_and_demo.sh: venv creation failed (Debian: sudo apt install python3-venv)" >&2
    rm -rf "$VENV"
    exit 1
  fi
fi
# colcon crawls the workspace recursively; the venv's share/ holds ~90 package.xml of the
# ROS wheels, which must not be picked up as workspace packages.
touch "$VENV/COLCON_IGNORE"
# The venv is an ament prefix (the ROS wheels install share/ament_index there); colcon warns
# about every AMENT_PREFIX_PATH entry without local_setup.* files. Its environment is set
# by env.sh, so these are deliberately empty.
for ext in sh bash; do
  [ -e "$VENV/local_setup.$ext" ] || \
    echo "# atlas_crawl: empty on purpose; the venv environment is set by atlas_crawl_bringup/scripts/env.sh" \
      > "$VENV/local_setup.$ext"
done

# --- 2. pinned requirements ----------------------------------------------------------------
step "pinned requirements"
want="$( { sha256sum < "$REQ"; "$VENV/bin/python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
if [ "$want" != "$have" ]; then
  log "installing pinned requirements ($(grep -c '==' "$REQ") pins; a few minutes on a fresh venv)"
  rm -f "$STAMP"
  # (the filter drops pip's per-package notes about absent local index mirrors some
  #  machines configure; real errors still show)
  with_heartbeat "${NICE[@]}" "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQ" \
    2> >(grep -v "^WARNING: Location 'file:" >&2)
  echo "$want" > "$STAMP"
  log "requirements installed"
else
  log "requirements already installed (stamp matches $REQ)"
fi

# --- 3. CMake path fix for the PyPI ROS wheels ---------------------------------------------
step "CMake path fix for the PyPI ROS wheels"
"$VENV/bin/python" "$HERE/fix_wheel_paths.py"

# --- 4. environment + build ------------------------------------------------------------------
set +u   # activate / local_setup.bash read unset variables
# shellcheck disable=SC1091
. "$HERE/env.sh"
set -u
step "colcon build"
"${NICE[@]}" colcon build --symlink-install \
  --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=ON
set +u
# shellcheck disable=SC1091
. "$ROOT/install/local_setup.bash"
set -u
log "build done"

# --- 5. the main job ------------------------------------------------------------------------
if [ "$DEMO" = 1 ]; then
  step "demo: python -m atlas_crawl_bringup.demo ${QUICK[*]:-}"
  python -m atlas_crawl_bringup.demo "${QUICK[@]}"
  log "demo done"
fi
