# shellcheck shell=bash
# The one environment definition of the atlas_crawl embedded default.
# Source it (bash):   . atlas_crawl_bringup/scripts/env.sh
# - activates the repo's venv (.venv, or $ATLAS_CRAWL_VENV),
# - puts the venv on CMAKE_PREFIX_PATH / AMENT_PREFIX_PATH (the PyPI ROS 2 Jazzy
#   wheels install their ament prefix into the venv itself),
# - keeps ROS 2 traffic on this host (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST),
# - picks a headless MuJoCo GL backend (egl, else osmesa) unless MUJOCO_GL is set,
# - sources install/local_setup.bash of the workspace if it has been built.
# Does not change shell options; safe to source twice.

ATLAS_CRAWL_ROOT="${ATLAS_CRAWL_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
ATLAS_CRAWL_VENV="${ATLAS_CRAWL_VENV:-$ATLAS_CRAWL_ROOT/.venv}"
export ATLAS_CRAWL_ROOT ATLAS_CRAWL_VENV

if [ -f "$ATLAS_CRAWL_VENV/bin/activate" ]; then
  # shellcheck disable=SC1091
  . "$ATLAS_CRAWL_VENV/bin/activate"
else
  echo "env.sh: no venv at $ATLAS_CRAWL_VENV; run atlas_crawl_bringup/scripts/setup_and_demo.sh --no-demo" >&2
fi

_atlas_prepend() {  # _atlas_prepend VAR DIR: put DIR first in the :-list VAR, once
  local var="$1" dir="$2" cur
  cur="${!var:-}"
  case ":$cur:" in *":$dir:"*) return 0 ;; esac
  export "$var=$dir${cur:+:$cur}"
}
_atlas_prepend CMAKE_PREFIX_PATH "$ATLAS_CRAWL_VENV"
_atlas_prepend AMENT_PREFIX_PATH "$ATLAS_CRAWL_VENV"
unset -f _atlas_prepend

export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
export RCUTILS_COLORIZED_OUTPUT="${RCUTILS_COLORIZED_OUTPUT:-0}"

if [ -z "${MUJOCO_GL:-}" ]; then
  if ldconfig -p 2>/dev/null | grep -q 'libEGL\.so'; then
    export MUJOCO_GL=egl
  elif ldconfig -p 2>/dev/null | grep -q 'libOSMesa\.so'; then
    export MUJOCO_GL=osmesa
  else
    export MUJOCO_GL=egl   # nothing found: rendering will fail loudly, physics still works
  fi
fi
export PYOPENGL_PLATFORM="${PYOPENGL_PLATFORM:-$MUJOCO_GL}"

if [ -f "$ATLAS_CRAWL_ROOT/install/local_setup.bash" ]; then
  # shellcheck disable=SC1091
  . "$ATLAS_CRAWL_ROOT/install/local_setup.bash"
fi
