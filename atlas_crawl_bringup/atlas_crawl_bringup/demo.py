"""The project's main job (README command 1 runs it after building).

A dispatcher: runs, in order, every demo whose module exists in the built
workspace, and says clearly which ones are not there yet. Each entry names a
module with a ``main`` function; ``main`` gets an argv list (``--quick`` is
passed through when given) or, if it takes no arguments, sees it in sys.argv.

    python -m atlas_crawl_bringup.demo [--quick] [--list]

Exit status: 0 if every available demo succeeded (also when none is available
yet), 1 if any demo failed.
"""
import argparse
import importlib
import importlib.util
import inspect
import sys
import time
import traceback

# (title, module, argv for --quick, argv otherwise). Grows with the project.
DEMOS = (
    ('kinematics benchmark (ours vs MuJoCo, issue 2 sec. 5)',
     'atlas_crawl_mujoco.kinematics_benchmark', ['--quick'], []),
    ('key-frame sequence in physics, filmed: prone, get up, crawl, turn, crawl back, lie down, roll (issue 3)',
     'atlas_crawl_mujoco.run_sequence',
     ['prone', 'init_crawl_stance_from_prone', 'crawl_forward:1:part', 'turn_left:1', 'crawl_backward:1:part',
      'lie_down', 'roll_to_back_from_left', '--video', 'reports/demo/sequence.mp4'],
     ['prone', 'init_crawl_stance_from_prone', 'crawl_forward:3:part', 'turn_left:2', 'crawl_backward:2:part',
      'lie_down', 'roll_to_back_from_left', '--video', 'reports/demo/sequence.mp4']),
    ('evaluation summary table beside the thesis (issue 3 sec. 4; thesis protocol: '
     'python -m atlas_crawl_eval.evaluate --all)',
     'atlas_crawl_eval.evaluate', ['--all', '--quick', '--out', 'reports/demo/evaluation'],
     ['--all', '--trials', '2', '--cycles', '5', '--out', 'reports/demo/evaluation']),
    ('embedded ROS 2 demo: stance, crawl, turn, crawl back, roll through real actions (issue 5 sec. 6)',
     'atlas_crawl_bringup.embedded', ['--quick'], []),
)


def _import(module):
    """Import `module`; None if it (or its package) does not exist yet.

    A missing dependency *inside* an existing module is a real error and is raised.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        parts = module.split('.')
        missing = {'.'.join(parts[:i + 1]) for i in range(len(parts))}
        if exc.name in missing:
            return None
        raise


def _exists(module):
    """True if `module` can be found (imports its parent packages, not the module)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _call_main(mod, argv):
    fn = getattr(mod, 'main', None)
    if fn is None:
        raise RuntimeError('%s has no main()' % mod.__name__)
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if params:
        return fn(list(argv))
    saved = sys.argv
    sys.argv = [mod.__name__] + list(argv)
    try:
        return fn()
    finally:
        sys.argv = saved


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m atlas_crawl_bringup.demo',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='short settings (smoke run)')
    parser.add_argument('--list', action='store_true', help='list demos and whether they exist')
    args = parser.parse_args(argv)

    failed, ran, missing = [], [], []
    t_all = time.monotonic()
    for k, (title, module, quick_argv, full_argv) in enumerate(DEMOS, start=1):
        step = '[demo %d/%d, %.0f s]' % (k, len(DEMOS), time.monotonic() - t_all)
        if args.list:
            print('%-60s %s' % (title, 'available' if _exists(module) else 'not built yet'))
            continue
        mod = _import(module)
        if mod is None:
            missing.append(title)
            print('%s SKIP %s: module %s does not exist yet in this workspace.'
                  % (step, title, module), flush=True)
            continue
        demo_argv = quick_argv if args.quick else full_argv
        print('%s RUN  %s: %s.main(%s)' % (step, title, module, demo_argv), flush=True)
        t0 = time.monotonic()
        try:
            rc = _call_main(mod, demo_argv)
        except SystemExit as exc:
            rc = exc.code
        except Exception:  # report and continue with the next demo
            traceback.print_exc()
            rc = 1
        dt = time.monotonic() - t0
        ok = rc in (None, 0)
        (ran if ok else failed).append(title)
        print('[demo %d/%d, %.0f s] %s %s (%.1f s)' % (k, len(DEMOS), time.monotonic() - t_all,
                                                     'DONE' if ok else 'FAIL', title, dt), flush=True)
    if args.list:
        return 0
    print('[demo] summary: %d ran ok, %d failed, %d not available yet (%.0f s)'
          % (len(ran), len(failed), len(missing), time.monotonic() - t_all), flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
