#!/usr/bin/env python3
"""Rewrite build-container paths baked into the PyPI ROS 2 Jazzy wheels.

The ros-jazzy-* wheels are built in a manylinux container; their CMake export
files (share/<pkg>/cmake/export_<pkg>__rosidl_generator_pyExport.cmake) name
  /opt/python/cp311-cp311/include/python3.11                  (Python headers)
  /opt/python/cp311-cp311/lib/python3.11/site-packages/...    (numpy headers)
which do not exist here, so CMake generation of any interface package that
depends on them fails. This rewrites the two prefixes to the running
interpreter's include dir and purelib dir (see
../shared/notes/ros2-jazzy-from-pypi.md, "Needed to make colcon build ... work", 2).

Scans text files under <prefix>/share and <prefix>/lib (not site-packages,
binaries skipped). Idempotent. Run with the venv's python:
    .venv/bin/python atlas_crawl_bringup/scripts/fix_wheel_paths.py [--check]
--check: only report, exit 1 if something still needs rewriting.
"""
import os
import sys
import sysconfig

OLD_INCLUDE = b'/opt/python/cp311-cp311/include/python3.11'
OLD_PURELIB = b'/opt/python/cp311-cp311/lib/python3.11/site-packages'


def candidate_files(prefix):
    site = os.path.join(prefix, 'lib', 'python%d.%d' % sys.version_info[:2])
    for top in (os.path.join(prefix, 'share'), os.path.join(prefix, 'lib')):
        for root, dirs, files in os.walk(top):
            if root == site or root.startswith(site + os.sep):
                dirs[:] = []
                continue
            for name in files:
                path = os.path.join(root, name)
                if not os.path.islink(path) and os.path.isfile(path):
                    yield path


def main(argv):
    check_only = '--check' in argv
    prefix = sys.prefix
    paths = sysconfig.get_paths()
    new_include = paths['include'].encode()
    new_purelib = paths['purelib'].encode()
    if not os.path.isfile(os.path.join(paths['include'], 'Python.h')):
        print('fix_wheel_paths: WARNING: %s/Python.h missing; building interface packages needs '
              'the Python development headers (Debian: apt install python3-dev)'
              % paths['include'], file=sys.stderr)
    changed = []
    for path in candidate_files(prefix):
        try:
            with open(path, 'rb') as f:
                data = f.read()
        except OSError:
            continue
        if b'\0' in data[:8192] or (OLD_INCLUDE not in data and OLD_PURELIB not in data):
            continue
        changed.append(path)
        if not check_only:
            data = data.replace(OLD_INCLUDE, new_include).replace(OLD_PURELIB, new_purelib)
            tmp = path + '.tmp-fix'
            with open(tmp, 'wb') as f:
                f.write(data)
            os.replace(tmp, path)
    verb = 'need rewriting' if check_only else 'rewritten'
    print('fix_wheel_paths: %d file(s) %s under %s' % (len(changed), verb, prefix))
    return 1 if (check_only and changed) else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
