"""Parameter definitions in generate_parameter_library (gpl) YAML format: typed defaults, validation, ROS descriptors.

One YAML file per class/node (``config/<name>_parameters.yaml``) in the format of
`generate_parameter_library <https://github.com/PickNikRobotics/generate_parameter_library>`_, so the same file can
later generate the C++ parameter struct of the ros2_control plugin::

    contact_inference:            # top-level key = namespace (node / class name)
      method:
        type: string
        default_value: "height"
        description: "Contact estimator: height | velocity | effort."
        validation:
          one_of<>: [["height", "velocity", "effort"]]
      height:                     # nested groups become dotted names: "height.threshold_m"
        threshold_m:
          type: double
          default_value: 0.04
          description: "[m] contact-point height below which a limb is in stance."
          validation:
            bounds<>: [0.0, 0.5]

Supported types: ``bool, int, double, string`` and their ``_array`` forms (``string_array`` ...).
Supported validators (gpl names): ``bounds<>``, ``lt<>``, ``gt<>``, ``lt_eq<>``, ``gt_eq<>``, ``one_of<>``,
``fixed_size<>``, ``size_gt<>``, ``size_lt<>``, ``not_empty<>``, ``unique<>``, ``element_bounds<>``, ``subset_of<>``.
Unknown validator names raise at load time (a typo must not silently disable a check).

Plain classes use :func:`load_parameter_file` + :meth:`ParameterSet.values` (no ROS import); flat files read as a
plain dict (atlas_crawl_mujoco, atlas_crawl_eval) use :func:`load_param_dict`.  Nodes use
:func:`declare_ros_parameters` which declares every parameter with a :class:`rcl_interfaces.msg.ParameterDescriptor`
(description incl. units, ``FloatingPointRange``/``IntegerRange`` for two-sided bounds, the other validators in
``additional_constraints``, ``read_only``) and :func:`add_validating_callback` which validates a set-parameters
request against the definitions and then hands it to the owner's ``apply`` function, which may still reject it with a
reason (e.g. a cross-parameter constraint).  Nothing is applied unless everything validates.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Mapping, Optional

import yaml

__all__ = [
    "ParameterError",
    "ParameterSpec",
    "ParameterSet",
    "ParamValues",
    "load_parameter_file",
    "load_param_dict",
    "config_path",
    "declare_ros_parameters",
    "add_validating_callback",
    "read_ros_parameters",
]

_SCALAR_TYPES = {"bool": bool, "int": int, "double": float, "string": str}
_ARRAY_TYPES = {"bool_array": bool, "int_array": int, "double_array": float, "string_array": str}
_VALIDATORS = {
    "bounds<>", "lt<>", "gt<>", "lt_eq<>", "gt_eq<>", "one_of<>", "fixed_size<>", "size_gt<>", "size_lt<>",
    "not_empty<>", "unique<>", "element_bounds<>", "subset_of<>",
}


class ParameterError(ValueError):
    """A parameter definition or value is invalid. The message is the human-readable reason."""


def _coerce(ptype: str, value: Any, name: str) -> Any:
    """Convert ``value`` to the Python type of ``ptype`` (int → float for doubles), or raise ParameterError."""
    def one(elem_t, v):
        if elem_t is float:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ParameterError(f"{name}: expected a number, got {v!r}")
            return float(v)
        if elem_t is int:
            if isinstance(v, bool) or not isinstance(v, int):
                if isinstance(v, float) and v.is_integer():
                    return int(v)
                raise ParameterError(f"{name}: expected an integer, got {v!r}")
            return int(v)
        if elem_t is bool:
            if not isinstance(v, bool):
                raise ParameterError(f"{name}: expected a bool, got {v!r}")
            return v
        if not isinstance(v, str):
            raise ParameterError(f"{name}: expected a string, got {v!r}")
        return v

    if ptype in _SCALAR_TYPES:
        return one(_SCALAR_TYPES[ptype], value)
    if ptype in _ARRAY_TYPES:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise ParameterError(f"{name}: expected a list, got {value!r}")
        return [one(_ARRAY_TYPES[ptype], v) for v in value]
    raise ParameterError(f"{name}: unsupported parameter type {ptype!r}")


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: dotted name, gpl type, default, description (with units), validators, read_only."""

    name: str
    type: str
    default: Any
    description: str
    validation: Mapping[str, list] = field(default_factory=dict)
    read_only: bool = False

    def check(self, value: Any) -> Any:
        """Coerce and validate ``value``; returns the coerced value or raises ParameterError with the reason."""
        v = _coerce(self.type, value, self.name)
        elems = v if isinstance(v, list) else [v]
        for e in elems:
            if isinstance(e, float) and not math.isfinite(e):
                raise ParameterError(f"{self.name}: value must be finite, got {e!r}")
        for key, args in self.validation.items():
            args = list(args) if isinstance(args, (list, tuple)) else [args]
            reason = self._apply_validator(key, args, v)
            if reason:
                raise ParameterError(f"{self.name}: {reason} (got {v!r})")
        return v

    @staticmethod
    def _apply_validator(key: str, args: list, v: Any) -> Optional[str]:
        if key == "bounds<>":
            lo, hi = args
            vals = v if isinstance(v, list) else [v]
            if any(not (lo <= x <= hi) for x in vals):
                return f"must be within [{lo}, {hi}]"
        elif key == "element_bounds<>":
            lo, hi = args
            if any(not (lo <= x <= hi) for x in v):
                return f"every element must be within [{lo}, {hi}]"
        elif key == "lt<>":
            if not v < args[0]:
                return f"must be < {args[0]}"
        elif key == "gt<>":
            if not v > args[0]:
                return f"must be > {args[0]}"
        elif key == "lt_eq<>":
            if not v <= args[0]:
                return f"must be <= {args[0]}"
        elif key == "gt_eq<>":
            if not v >= args[0]:
                return f"must be >= {args[0]}"
        elif key == "one_of<>":
            options = args[0]
            if v not in options:
                return f"must be one of {list(options)}"
        elif key == "subset_of<>":
            options = args[0]
            if any(x not in options for x in v):
                return f"every element must be one of {list(options)}"
        elif key == "fixed_size<>":
            if len(v) != args[0]:
                return f"must have exactly {args[0]} elements"
        elif key == "size_gt<>":
            if not len(v) > args[0]:
                return f"must have more than {args[0]} elements"
        elif key == "size_lt<>":
            if not len(v) < args[0]:
                return f"must have fewer than {args[0]} elements"
        elif key == "not_empty<>":
            if len(v) == 0:
                return "must not be empty"
        elif key == "unique<>":
            if len(set(v)) != len(v):
                return "elements must be unique"
        return None

    def constraints_text(self) -> str:
        parts = []
        for key, args in self.validation.items():
            parts.append(f"{key} {args}")
        return "; ".join(parts)


class ParamValues:
    """Read-only nested attribute view of parameter values: ``p.height.threshold_m`` and ``p["height.threshold_m"]``."""

    def __init__(self, flat: Mapping[str, Any]):
        object.__setattr__(self, "_flat", dict(flat))

    def __getitem__(self, name: str) -> Any:
        return self._flat[name]

    def __getattr__(self, name: str) -> Any:
        flat = object.__getattribute__(self, "_flat")
        if name in flat:
            return flat[name]
        prefix = name + "."
        sub = {k[len(prefix):]: v for k, v in flat.items() if k.startswith(prefix)}
        if sub:
            return ParamValues(sub)
        raise AttributeError(name)

    def __setattr__(self, name, value):
        raise AttributeError("ParamValues is read-only; use ParameterSet.values(overrides) / replace()")

    def __contains__(self, name: str) -> bool:
        return name in self._flat

    def as_dict(self) -> Dict[str, Any]:
        return copy.deepcopy(self._flat)

    def replace(self, **changes) -> "ParamValues":
        """A copy with changed values (dotted names passed as ``**{"a.b": 1}``); no validation — use ParameterSet."""
        d = dict(self._flat)
        d.update(changes)
        return ParamValues(d)

    def __repr__(self) -> str:
        return f"ParamValues({self._flat!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, ParamValues) and self._flat == other._flat


class ParameterSet:
    """All parameters of one namespace (node/class), in definition order."""

    def __init__(self, namespace: str, specs: Iterable[ParameterSpec]):
        self.namespace = namespace
        self.specs: Dict[str, ParameterSpec] = {s.name: s for s in specs}

    # -- loading ---------------------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping, namespace: Optional[str] = None) -> "ParameterSet":
        if not isinstance(data, Mapping) or not data:
            raise ParameterError("parameter file must be a mapping {namespace: {...}}")
        if namespace is None:
            if len(data) != 1:
                raise ParameterError(f"parameter file has several namespaces {list(data)}; pass namespace=")
            namespace = next(iter(data))
        if namespace not in data:
            raise ParameterError(f"namespace {namespace!r} not in parameter file (has {list(data)})")
        specs: list = []
        cls._walk(data[namespace], "", specs)
        if not specs:
            raise ParameterError(f"namespace {namespace!r} defines no parameters")
        return cls(namespace, specs)

    @classmethod
    def _walk(cls, node: Mapping, prefix: str, out: list) -> None:
        for key, val in node.items():
            name = f"{prefix}{key}"
            if not isinstance(val, Mapping):
                raise ParameterError(f"{name}: expected a mapping (group or parameter definition)")
            if "type" in val and not isinstance(val["type"], Mapping):
                out.append(cls._spec(name, val))
            else:
                cls._walk(val, name + ".", out)

    @staticmethod
    def _spec(name: str, d: Mapping) -> ParameterSpec:
        ptype = d["type"]
        if ptype not in _SCALAR_TYPES and ptype not in _ARRAY_TYPES:
            raise ParameterError(f"{name}: unsupported type {ptype!r}")
        if "default_value" not in d:
            raise ParameterError(f"{name}: missing default_value (every parameter of ours has a default)")
        desc = str(d.get("description", "")).strip()
        if not desc:
            raise ParameterError(f"{name}: missing description (state the units)")
        validation = dict(d.get("validation") or {})
        for k in validation:
            if k not in _VALIDATORS:
                raise ParameterError(f"{name}: unknown validator {k!r} (known: {sorted(_VALIDATORS)})")
        spec = ParameterSpec(name=name, type=ptype, default=None, description=desc, validation=validation,
                             read_only=bool(d.get("read_only", False)))
        try:
            default = spec.check(d["default_value"])
        except ParameterError as e:
            raise ParameterError(f"default does not validate: {e}") from None
        return ParameterSpec(name=name, type=ptype, default=default, description=desc, validation=validation,
                             read_only=spec.read_only)

    def prefixed(self, prefix: str) -> "ParameterSet":
        """The same parameters named ``<prefix>.<name>``: another component's parameters declared on a node that
        hosts it (e.g. the gait generator's on the gait sequencer node); ``values.<prefix>`` (a :class:`ParamValues`
        attribute) gives them back unprefixed."""
        return ParameterSet(self.namespace, [dataclasses.replace(s, name=f"{prefix}.{n}")
                                             for n, s in self.specs.items()])

    # -- values ----------------------------------------------------------------------------------------------------
    def defaults(self) -> Dict[str, Any]:
        return {n: copy.deepcopy(s.default) for n, s in self.specs.items()}

    def check(self, name: str, value: Any) -> Any:
        if name not in self.specs:
            raise ParameterError(f"unknown parameter {name!r} in {self.namespace!r}")
        return self.specs[name].check(value)

    def values(self, overrides: Optional[Mapping[str, Any]] = None, base: Optional[ParamValues] = None) -> ParamValues:
        """Defaults (or ``base``) updated with ``overrides`` (dotted names or nested dicts), all validated.

        Raises ParameterError naming the first bad entry; nothing is returned in that case.
        """
        flat = base.as_dict() if base is not None else self.defaults()
        for name, value in _flatten(overrides or {}).items():
            flat[name] = self.check(name, value)
        return ParamValues(flat)


def _flatten(d: Mapping, prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, name + "."))
        else:
            out[name] = v
    return out


def config_path(filename: str, package: str = "atlas_crawl_controller", source_dir: Optional[str] = None) -> str:
    """Path of ``config/<filename>`` of ``package``: the source tree if it is there, else the installed share dir.

    ``source_dir`` is the directory holding the package's ``config/`` in the source tree (default: this package's,
    so pass it when ``package`` is another one); then ament_index, then every ``AMENT_PREFIX_PATH`` entry.
    """
    if source_dir is None:
        source_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    here = os.path.abspath(os.path.join(source_dir, "config", filename))
    if os.path.exists(here):
        return here
    try:  # installed (colcon install, non-symlink): share/<pkg>/config
        from ament_index_python.packages import get_package_share_directory  # type: ignore
        p = os.path.join(get_package_share_directory(package), "config", filename)
        if os.path.exists(p):
            return p
    except Exception:
        pass
    prefix = os.environ.get("AMENT_PREFIX_PATH", "")
    for root in prefix.split(os.pathsep):
        p = os.path.join(root, "share", package, "config", filename)
        if root and os.path.exists(p):
            return p
    raise FileNotFoundError(f"config/{filename} of {package} not found")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with a key twice (PyYAML keeps the last silently: a second parameter of
    the same name would replace the first one's default and meaning)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ParameterError(f"duplicate key {key!r} at line {key_node.start_mark.line + 1}")
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_parameter_file(path_or_name: str, namespace: Optional[str] = None) -> ParameterSet:
    """Load a gpl YAML (absolute path, or a file name under this package's config/); a key given twice in one
    mapping is refused (:class:`ParameterError` with the line)."""
    path = path_or_name if os.path.isabs(path_or_name) else config_path(path_or_name)
    with open(path, encoding="utf-8") as f:
        try:
            data = yaml.load(f, Loader=_UniqueKeyLoader)  # noqa: S506 — a SafeLoader subclass
        except ParameterError as e:
            raise ParameterError(f"{path}: {e}") from None
    return ParameterSet.from_dict(data, namespace)


def load_param_dict(path: str, overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Defaults of a one-namespace gpl YAML (absolute or cwd-relative ``path``) updated with flat ``overrides``.

    A plain ``dict`` in definition order, every value coerced and validated, for the flat parameter files of the
    MuJoCo backend and the evaluation harness.  Raises :class:`ParameterError` (a ValueError) naming the parameter:
    "unknown parameter ...", "... outside bounds [lo, hi] ...", "... not one of [...] ..." (the wording those
    packages' callers and tests rely on), or the type error for parameters without bounds/one_of.
    """
    path = os.path.abspath(path)
    pset = load_parameter_file(path)
    out = pset.defaults()
    for name, value in (overrides or {}).items():
        spec = pset.specs.get(name)
        if spec is None:
            raise ParameterError(f"unknown parameter '{name}' (known: {sorted(pset.specs)}) in {path}")
        try:
            out[name] = spec.check(value)
        except ParameterError as e:
            if "bounds<>" in spec.validation:
                lo, hi = spec.validation["bounds<>"]
                raise ParameterError(f"parameter '{name}'={value!r} outside bounds [{lo}, {hi}] ({path}): {e}") \
                    from None
            if "one_of<>" in spec.validation:
                raise ParameterError(f"parameter '{name}'={value!r} not one of {spec.validation['one_of<>'][0]} "
                                     f"({path}): {e}") from None
            raise
    return out


# ------------------------------------------------------------------------------------------------------------------
# ROS adapters (rclpy imported lazily so the plain classes never need ROS)
# ------------------------------------------------------------------------------------------------------------------
def _ros_type(ptype: str):
    from rcl_interfaces.msg import ParameterType
    return {
        "bool": ParameterType.PARAMETER_BOOL, "int": ParameterType.PARAMETER_INTEGER,
        "double": ParameterType.PARAMETER_DOUBLE, "string": ParameterType.PARAMETER_STRING,
        "bool_array": ParameterType.PARAMETER_BOOL_ARRAY, "int_array": ParameterType.PARAMETER_INTEGER_ARRAY,
        "double_array": ParameterType.PARAMETER_DOUBLE_ARRAY, "string_array": ParameterType.PARAMETER_STRING_ARRAY,
    }[ptype]


def descriptor_for(spec: ParameterSpec):
    """rcl_interfaces ParameterDescriptor of a spec (ranges for two-sided scalar bounds, text for the rest)."""
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
    d = ParameterDescriptor(name=spec.name, type=_ros_type(spec.type), description=spec.description,
                            read_only=spec.read_only, additional_constraints=spec.constraints_text())
    b = spec.validation.get("bounds<>")
    if b is not None and spec.type == "double":
        d.floating_point_range = [FloatingPointRange(from_value=float(b[0]), to_value=float(b[1]), step=0.0)]
    elif b is not None and spec.type == "int":
        d.integer_range = [IntegerRange(from_value=int(b[0]), to_value=int(b[1]), step=1)]
    return d


def declare_ros_parameters(node, pset: ParameterSet) -> ParamValues:
    """Declare every parameter of ``pset`` on ``node`` (values from launch/YAML overrides win over defaults).

    Returns the validated values. An override that fails validation raises ParameterError (the node must not start
    with a bad configuration). An integer override of a double parameter (``x:=0``) is taken as that number.
    """
    from rclpy.parameter import Parameter
    overrides = getattr(node, "_parameter_overrides", None) or {}
    declared = {}
    for name, spec in pset.specs.items():
        o = overrides.get(name)
        if o is not None and spec.type == "double" and o.type_ == Parameter.Type.INTEGER:
            overrides[name] = Parameter(name, value=float(o.value))   # "0" for a double: 0.0, not a refused type
        p = node.declare_parameter(name, spec.default, descriptor_for(spec))
        declared[name] = p.value
    flat = {}
    for name, value in declared.items():
        if value is None:
            value = pset.specs[name].default
        flat[name] = pset.check(name, value)
    _ = Parameter
    return ParamValues(flat)


def read_ros_parameters(node, pset: ParameterSet) -> ParamValues:
    """Current values of the declared parameters, validated."""
    return ParamValues({n: pset.check(n, node.get_parameter(n).value) for n in pset.specs})


def add_validating_callback(node, pset: ParameterSet, get_current: Callable[[], ParamValues],
                            apply: Callable[[ParamValues], Optional[str]]):
    """Register an on-set-parameters callback: validate against ``pset``, then ``apply(new_values)``.

    ``apply`` returns None to accept (and must already have applied the change) or a reason string to reject
    (and must have left everything unchanged).  Parameters outside ``pset`` are passed through untouched
    (e.g. ``use_sim_time``).
    """
    from rcl_interfaces.msg import SetParametersResult

    def cb(params):
        changes = {}
        for p in params:
            if p.name not in pset.specs:
                continue
            try:
                changes[p.name] = pset.check(p.name, p.value)
            except ParameterError as e:
                return SetParametersResult(successful=False, reason=str(e))
        if not changes:
            return SetParametersResult(successful=True)
        new = get_current().replace(**changes)
        try:
            reason = apply(new)
        except Exception as e:  # an apply bug must reject, not crash the parameter service
            reason = f"apply failed: {type(e).__name__}: {e}"
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    return node.add_on_set_parameters_callback(cb)
