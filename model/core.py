"""The model contract: typed bounds, initial states, named actions, symmetry, variants.

A model is written once and read by every engine (BFS, DFS, simulation, Spark, replay) and by the proofs.  States are
immutable values; an action is a pure function ``(state, ctx) -> successors``.  A minimal model::

    @attrs.frozen
    class Bounds:
        limit: int = 3

    counter = Model("counter", Bounds)

    @counter.init
    def start(b: Bounds):
        yield 0

    @counter.action
    def tick(s: int, ctx: Context):
        if s < ctx.b.limit:
            yield s + 1

    @counter.action(params=("by",))
    def jump(s: int, ctx: Context):
        for by in (2, 3):
            if s + by <= ctx.b.limit:
                yield (by,), s + by       # parameterised actions yield (param values, next state)

An action without parameters may return a list or tuple of successors instead of yielding them (engines take it
without a copy).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import attrs
import xxhash

from kraftcheck.model.bound_docs import source_comments
from kraftcheck.model.encoding import fingerprint_of, stable_encode, to_view
from kraftcheck.model.ids import IdSymmetry, canon_for

S = TypeVar("S")
B = TypeVar("B")

ActionFn = Callable[[Any, "Context"], Iterable[Any]]


@attrs.frozen
class Variant:
    """A named switch that changes one rule.  ``kind`` is ``feature`` or ``mutation``; a mutation names the property
    it is expected to break (``expect``) so that CI can assert the checker still finds the bug, and the bound
    overrides it needs to be found (``bounds``), which ``check --variant NAME`` applies: a mutation whose bug lies
    beyond the default bounds must not pass as ok.  A mutation the properties cannot tell from the original (an
    equivalent mutant) names no property and says why in ``equivalent``."""

    name: str
    kind: str
    doc: str
    expect: str | None = None
    bounds: tuple[tuple[str, Any], ...] = ()
    equivalent: str | None = None
    requires: tuple[str, ...] = ()  # other variants it plants its bug into (e.g. a pre-vote mutation needs prevote)

    @property
    def needs(self) -> dict[str, Any]:
        """The bound overrides this variant needs, as a dict."""
        return dict(self.bounds)


@attrs.frozen
class Profile:
    """A named set of bound overrides (``--profile NAME``): ``default`` is the bounds' own defaults, ``deep`` goes
    further.  ``states`` and ``seconds`` are what the profile was measured to take (distinct states, one-core CPU
    seconds), shown by ``list`` so that a user knows the cost before starting."""

    name: str
    doc: str
    bounds: tuple[tuple[str, Any], ...] = ()
    states: int | None = None
    seconds: float | None = None


@attrs.frozen
class Reduction:
    """A state-space reduction that removes behaviour, switched by the boolean bound ``bound`` (on = reduced).
    Declared so that results can say which behaviours a run left out, and profiles can switch it off."""

    bound: str
    doc: str


@attrs.frozen
class Context(Generic[B]):
    """What an action may read besides the state: the bounds and the active variants."""

    b: B
    variants: frozenset[str] = frozenset()

    def on(self, variant: str) -> bool:
        return variant in self.variants


@attrs.frozen
class Action:
    """A named action.  ``params`` names the parameters; a parameterised action yields ``(values, next_state)``."""

    name: str
    fn: ActionFn
    params: tuple[str, ...] = ()
    doc: str = ""

    def successors(self, state: Any, ctx: Context[Any]) -> Iterator[tuple[tuple[Any, ...], Any]]:
        """Uniform view for engines: pairs of (parameter values, next state)."""
        if self.params:
            yield from self.fn(state, ctx)
        else:
            for nxt in self.fn(state, ctx):
                yield (), nxt

    def named_params(self, values: tuple[Any, ...]) -> dict[str, Any]:
        return dict(zip(self.params, values))


class BadBound(ValueError):
    """A ``--set NAME=VALUE`` the model's bounds do not accept."""


class Model(Generic[S, B]):
    """A protocol model: see the module docstring for how to write one."""

    def __init__(
        self,
        name: str,
        bounds: type[B],
        doc: str = "",
        encode: Callable[[Any], bytes] = stable_encode,
        view: Callable[[Any], Any] = to_view,
        bags: tuple[str, ...] = (),
        diagram: Any = None,
    ) -> None:
        if not attrs.has(bounds):  # the bounds record is an attrs class: typed fields with defaults
            raise TypeError("bounds must be an attrs class whose fields all have defaults")
        self.name = name
        self.bounds_type: Any = bounds
        self.doc = doc
        self.encode = encode
        self.view = view
        self.bags = bags  # view paths that hold a multiset (messages in flight): traces diff them as bags
        self.actions: list[Action] = []
        self.variants: dict[str, Variant] = {}
        self.profiles: dict[str, Profile] = {}
        # the profiles the main job (``kraftcheck check`` with no model named) runs; a second one covers a fault the
        # default cannot afford, and a premise or target reached in either counts as reached (see cli/commands.py)
        self.main_profiles: tuple[str, ...] = ("default",)
        self.reductions: dict[str, Reduction] = {}
        self.symmetry: Callable[[Any, Any], Any] | None = None
        self.symmetry_encoding: Callable[[Any, Any], bytes] | None = None
        self.id_symmetries: list[IdSymmetry] = []  # declared interchangeable ids (symmetric_ids)
        # a hand-written symmetry's renamings, for ``check --check-symmetry`` where no ids are declared:
        # ``renamings(bounds)`` lists functions state -> renamed state, every renaming the symmetry claims
        self.renamings: Callable[[Any], list[Callable[[Any], Any]]] | None = None
        self._declared: tuple[Any, dict[Any, Any]] | None = None  # the engine's canonicaliser and its per-bounds cache
        self.validate_bounds: Callable[[B], str | None] | None = None
        self.fairness: list[Any] = []  # model.fairness.Fairness records, see declare_fairness
        # bounds -> why liveness cannot be judged at them (a bound artefact its fairness cannot express), or None;
        # the checker then reports the liveness properties as not judged, with that reason, never as holding
        self.liveness_unjudged: Callable[[B], str | None] | None = None
        self._init: Callable[[B], Iterable[S]] | None = None
        self.diagram: Any = diagram  # how sequence diagrams read nodes and messages (model.diagram.Diagram)

    # ---- building a model -------------------------------------------------------------------------------------
    def init(self, fn: Callable[[B], Iterable[S]]) -> Callable[[B], Iterable[S]]:
        """Decorator: ``fn(bounds)`` yields the initial states."""
        self._init = fn
        return fn

    def action(self, fn: ActionFn | None = None, *, params: tuple[str, ...] = (), name: str | None = None) -> Any:
        """Decorator for an action; ``@m.action`` or ``@m.action(params=("node",))``."""

        def register(f: ActionFn) -> ActionFn:
            action_name = name or f.__name__
            if any(a.name == action_name for a in self.actions):
                raise ValueError(f"model {self.name} has two actions named {action_name}")
            self.actions.append(Action(name=action_name, fn=f, params=tuple(params),
                                       doc=(f.__doc__ or "").strip().split("\n")[0]))
            return f

        return register(fn) if fn is not None else register

    def variant(
        self,
        name: str,
        doc: str,
        kind: str = "feature",
        expect: str | None = None,
        bounds: dict[str, Any] | None = None,
        equivalent: str | None = None,
        requires: tuple[str, ...] = (),
    ) -> Variant:
        """Declare a variant.  ``kind='mutation'`` must name the property it is expected to break (``expect``), or
        say why no property can (``equivalent``); ``bounds`` are the overrides it needs to be found (applied as
        given at the default profile, raised where short under another); ``requires`` names variants it only makes
        sense with (switched on with it)."""
        if kind not in ("feature", "mutation"):
            raise ValueError("variant kind is 'feature' or 'mutation'")
        if kind == "mutation" and not expect and not equivalent:
            raise ValueError(f"mutation variant {name} must name the property it breaks (expect=...)")
        if equivalent and (kind != "mutation" or expect):
            raise ValueError(f"variant {name}: only a mutation without expect=... can be equivalent")
        self._check_bound_names(f"variant {name}", bounds or {})
        unknown = [r for r in requires if r not in self.variants]
        if unknown:
            raise ValueError(f"variant {name} requires undeclared variants {unknown} (declare them first)")
        v = Variant(name=name, kind=kind, doc=doc, expect=expect, bounds=tuple((bounds or {}).items()),
                    equivalent=equivalent, requires=tuple(requires))
        self.variants[name] = v
        return v

    def profile(
        self,
        name: str,
        doc: str,
        bounds: dict[str, Any] | None = None,
        states: int | None = None,
        seconds: float | None = None,
    ) -> Profile:
        """Declare a bounds profile (``--profile NAME``); ``states``/``seconds`` record what it was measured to take."""
        self._check_bound_names(f"profile {name}", bounds or {})
        p = Profile(name=name, doc=doc, bounds=tuple((bounds or {}).items()), states=states, seconds=seconds)
        self.profiles[name] = p
        return p

    def reduction(self, bound: str, doc: str) -> Reduction:
        """Declare that the boolean bound ``bound`` switches a reduction that removes behaviour (on = reduced)."""
        fields = self.bound_fields()
        if not isinstance(fields.get(bound), bool):
            raise ValueError(f"reduction {bound}: the model's bounds need a boolean field {bound!r}")
        r = Reduction(bound=bound, doc=doc)
        self.reductions[bound] = r
        return r

    def _check_bound_names(self, what: str, bounds: dict[str, Any]) -> None:
        unknown = sorted(set(bounds) - set(self.bound_fields()))
        if unknown:
            raise ValueError(f"{what} of model {self.name} sets unknown bound {unknown[0]!r}")

    def symmetric(
        self, fn: Callable[[S, B], S], encoding: Callable[[S, B], bytes] | None = None
    ) -> Callable[[S, B], S]:
        """Decorator: ``fn(state, bounds)`` returns the canonical representative of the state's symmetry class.

        ``encoding(state, bounds)``, if given, must equal ``encode(fn(state, bounds))``: fingerprints then use it and
        skip building the representative, which engines never look at."""
        self.symmetry = fn
        self.symmetry_encoding = encoding
        return fn

    def symmetric_ids(self, kind: str, bound: str, switch: str | None = None, indexed: bool = False) -> None:
        """Declare the ids ``0 .. bound-1`` of ``kind`` interchangeable, as TLA+'s ``SYMMETRY Permutations(S)``.

        The state marks where those ids are with ``model.ids`` field helpers (``id_field(kind)``, ``ids_field``,
        ``indexed_field``, ``keyed_field``); ``indexed``: the state itself is a tuple indexed by them.  ``bound``
        names the bound holding their number; ``switch``, a boolean bound that turns the reduction off when false.
        The engine then computes the canonical fingerprint (``model.ids``: the smallest encoding over the renamings
        that sort the ids by an id-free signature), so no canonicaliser is written by hand; ``kraftcheck check
        --check-symmetry N`` verifies the declaration on sampled states.  A hand-written ``symmetric(fn, ...)``
        declared afterwards replaces the engine's canonicaliser and is checked against these renamings."""
        if kind in {d.kind for d in self.id_symmetries}:
            raise ValueError(f"model {self.name} declares the ids of {kind!r} twice")
        self._check_bound_names(f"symmetric ids {kind}", {bound: 0, **({switch: 0} if switch else {})})
        if indexed and any(d.indexed for d in self.id_symmetries):
            raise ValueError(f"model {self.name}: only one kind of id can index the whole state")
        self.id_symmetries.append(IdSymmetry(kind=kind, bound=bound, switch=switch, indexed=indexed))
        decls, cache = self.id_symmetries, {}  # type: ignore[var-annotated]
        encode = self.encode

        def declared_symmetry(s: Any, b: Any) -> Any:
            return canon_for(decls, b, cache).representative(s)

        def declared_symmetry_encoding(s: Any, b: Any) -> bytes:
            return canon_for(decls, b, cache).encoding(s)

        # the engine's canonical encoding is stable_encode's bytes; a model with its own encode has its
        # representative encoded instead
        self.symmetric(declared_symmetry, declared_symmetry_encoding if encode is stable_encode else None)
        self._declared = (declared_symmetry, cache)

    def symmetry_on(self, bounds: Any) -> bool:
        """Whether a symmetry reduction is in force at ``bounds``: a declared one can be switched off by its bound
        (or have at most one id of each kind), which the result's manifest must not report as a reduction."""
        if self.symmetry is None:
            return False
        declared = self._declared
        if declared is None or declared[0] is not self.symmetry:
            return True  # hand-written: always in force
        return bool(canon_for(self.id_symmetries, bounds, declared[1]).sizes)

    def declare_fairness(self, *families: Any) -> None:
        """Declare fairness families (``kraftcheck.weak``, ``strong`` or ``finite``) that liveness properties may
        assume, e.g. ``m.declare_fairness(weak("release", ("release",), per=("c",), doc="a holder releases"))``.
        Every action a family names must already be declared (``@m.action``); a family name is declared once."""
        names = {f.name for f in self.fairness}
        for f in families:
            unknown = [a for a in f.actions if self.action_named(a) is None]
            if unknown:
                raise ValueError(f"fairness {f.name} of model {self.name} names unknown action {unknown[0]!r}")
            if f.name in names:
                raise ValueError(f"model {self.name} declares fairness {f.name} twice")
            names.add(f.name)
            self.fairness.append(f)

    def bounds_check(self, fn: Callable[[B], str | None]) -> Callable[[B], str | None]:
        """Decorator: ``fn(bounds)`` returns an error message for a combination of bounds the model cannot run."""
        self.validate_bounds = fn
        return fn

    # ---- deriving a model (a protocol change in the user's own file) -----------------------------------------
    def derive(self, name: str, doc: str | None = None) -> Model[S, B]:
        """A copy of this model under a new name, to change without touching the original: replace or remove an
        action (``replace_action``, ``remove_action``), add one (``@m.action``), add a variant (``m.variant``) or a
        profile.  Bounds, initial states, encoding, view, bags, symmetry, fairness and diagram hooks are
        shared.  Traces and results name the derived model.  A replaced action must keep the symmetry the model
        declares (e.g. treat every voter id alike), or the derived model must drop it with ``m.symmetry = None``."""
        m: Model[S, B] = Model(name, self.bounds_type, self.doc if doc is None else doc, self.encode, self.view,
                               self.bags)
        m.actions = list(self.actions)
        m.variants = dict(self.variants)
        m.profiles = dict(self.profiles)
        m.reductions = dict(self.reductions)
        m.fairness = list(self.fairness)  # a replaced action keeps its place in the families that name it
        m.liveness_unjudged = self.liveness_unjudged
        m.symmetry, m.symmetry_encoding = self.symmetry, self.symmetry_encoding
        m.id_symmetries = list(self.id_symmetries)  # its own list: a kind declared on the copy stays there
        m.renamings = self.renamings
        m._declared = self._declared
        m.validate_bounds, m._init = self.validate_bounds, self._init
        m.diagram = self.diagram
        return m

    def replace_action(self, name: str, fn: ActionFn | None = None, *, params: tuple[str, ...] | None = None) -> Any:
        """Replace the function of action ``name`` (same place, same parameter names unless ``params`` is given);
        ``m.replace_action("receive_vote", fn)`` or as a decorator ``@m.replace_action("receive_vote")``."""
        index = next((i for i, a in enumerate(self.actions) if a.name == name), None)
        if index is None:
            raise ValueError(f"model {self.name} has no action {name!r} (actions: "
                             f"{', '.join(a.name for a in self.actions)})")

        def register(f: ActionFn) -> ActionFn:
            old = self.actions[index]
            doc = (f.__doc__ or "").strip().split("\n")[0] or old.doc
            self.actions[index] = Action(name=name, fn=f, params=old.params if params is None else tuple(params),
                                         doc=doc)
            return f

        return register(fn) if fn is not None else register

    def remove_action(self, name: str) -> None:
        """Drop action ``name`` (e.g. a fault the changed protocol rules out)."""
        if self.action_named(name) is None:
            raise ValueError(f"model {self.name} has no action {name!r}")
        self.actions = [a for a in self.actions if a.name != name]

    # ---- reading a model --------------------------------------------------------------------------------------
    def default_bounds(self) -> B:
        self.bound_fields()  # a bound without a default: the one-line BadBound, not the class's TypeError
        return self.bounds_type()  # type: ignore[no-any-return]

    def bound_fields(self) -> dict[str, Any]:
        """Bound name -> default value, in declaration order (BadBound for a bound declared without a default)."""
        fields = {a.name: a.default for a in attrs.fields(self.bounds_type)}
        for name, default in fields.items():
            if default is attrs.NOTHING:
                raise BadBound(f"model {self.name}: bound {name!r} has no default value; give every field of "
                               f"{self.bounds_type.__name__} one (e.g. {name}: int = 2)")
        return fields

    def bound_docs(self) -> dict[str, str]:
        """Bound name -> what it means: ``metadata={"doc": ...}`` on the attrs field, else the comment that ends the
        field's line in the source (how the built-in models document their bounds), else nothing."""
        docs = source_comments(self.bounds_type)
        for a in attrs.fields(self.bounds_type):
            if a.metadata.get("doc"):
                docs[a.name] = str(a.metadata["doc"])
        return {name: docs[name] for name in self.bound_fields() if docs.get(name)}

    def profile_bounds(self, name: str) -> dict[str, Any]:
        """The overrides of profile ``name`` (``default`` is always there: no overrides unless declared)."""
        if name in self.profiles:
            return dict(self.profiles[name].bounds)
        if name == "default":
            return {}
        accepted = ", ".join(["default", *[p for p in self.profiles if p != "default"]])
        raise BadBound(f"model {self.name} has no profile {name!r} (profiles: {accepted})")

    def active_reductions(self, bounds: Any) -> list[str]:
        """The declared reductions switched on in ``bounds``."""
        return [r for r in self.reductions if getattr(bounds, r)]

    def make_bounds(self, overrides: dict[str, str | int | bool] | None = None) -> B:
        """Bounds from defaults plus ``name=value`` overrides, each converted to the field's type (raises BadBound)."""
        defaults = self.bound_fields()
        values: dict[str, Any] = {}
        for key, raw in (overrides or {}).items():
            if key not in defaults:
                accepted = ", ".join(defaults) or "none"
                raise BadBound(f"model {self.name} has no bound {key!r} (bounds: {accepted})")
            values[key] = _convert(key, raw, defaults[key])
        bounds: B = self.bounds_type(**values)
        if self.validate_bounds is not None:
            problem = self.validate_bounds(bounds)
            if problem:
                raise BadBound(f"bad bounds for model {self.name}: {problem}")
        return bounds

    def context(self, bounds: B | None = None, variants: Iterable[str] = ()) -> Context[B]:
        names = frozenset(variants)
        unknown = sorted(names - set(self.variants))
        if unknown:
            accepted = ", ".join(self.variants) or "none"
            raise KeyError(f"model {self.name} has no variant {unknown[0]!r} (variants: {accepted})")
        return Context(b=bounds if bounds is not None else self.default_bounds(), variants=names)

    def initial_states(self, ctx: Context[B]) -> list[S]:
        if self._init is None:
            raise TypeError(f"model {self.name} declares no initial states (use @model.init)")
        return list(self._init(ctx.b))

    def action_named(self, name: str) -> Action | None:
        for a in self.actions:
            if a.name == name:
                return a
        return None

    def successors(self, state: S, ctx: Context[B]) -> Iterator[tuple[Action, tuple[Any, ...], S]]:
        """Every (action, parameter values, next state) the model allows from ``state``."""
        for a in self.actions:
            for values, nxt in a.successors(state, ctx):
                yield a, values, nxt

    def fingerprinter(self, ctx: Context[B]) -> Callable[[S], int]:
        """The function engines use: fingerprint of the canonical (symmetry-reduced) encoding."""
        encode, sym, b, xxh = self.encode, self.symmetry, ctx.b, xxhash.xxh3_64_intdigest
        if sym is None:

            def fingerprint(s: Any) -> int:
                return xxh(encode(s)) or 1  # the same value as fingerprint_of(encode, s), one call fewer

            return fingerprint
        sym_encode = self.symmetry_encoding
        if sym_encode is not None:

            def sym_fingerprint(s: Any) -> int:
                return xxh(sym_encode(s, b)) or 1  # == fingerprint_of(encode, sym(s, b))

            return sym_fingerprint
        return lambda s: fingerprint_of(encode, sym(s, b))


def _convert(key: str, raw: str | int | bool, default: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    if isinstance(default, bool):
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise BadBound(f"bound {key} takes true or false, not {raw!r}")
    if isinstance(default, int):
        try:
            value = int(raw)
        except ValueError:
            raise BadBound(f"bound {key} takes a whole number, not {raw!r}") from None
        if value < 0:
            raise BadBound(f"bound {key} takes a number >= 0, not {value}")
        return value
    return raw
