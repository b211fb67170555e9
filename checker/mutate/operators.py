"""The mutation operators: each proposes one-rule changes on a model module's syntax tree.

A proposal (``Site``) names the node it replaces by its path from the module's root, so that a worker can apply it
to its own copy of the tree and compile it with the module's real file name (line numbers stay those of the file).
Only code inside functions is changed: never module or class-level statements (bounds defaults, constants, the model's
declarations), docstrings, annotations, decorators or default arguments, and never a read of a variant switch
(``ctx.on(NAME)``, ``NAME in ctx.variants``): variants are the model's declared alternatives, checked by their own
runs.  Proposals whose text is unchanged by ``ast.unparse`` are dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

import attrs

OPERATORS: dict[str, str] = {
    "drop-conjunct": "drop one operand of an 'and' in a guard (if, elif, while, conditional-expression or "
    "comprehension test, or a returned condition)",
    "negate-condition": "negate an if, elif, while, conditional-expression or comprehension test",
    "flip-compare": "flip one comparison: < and <=, > and >=, == and !=, in and not in, is and is not",
    "shift-constant": "an integer constant n becomes n+1, and n-1",
    "shift-index": "a subscript index or slice bound i becomes i+1, and i-1",
    "skip-update": "drop one keyword of an evolve/_replace/replace/with_* update, or keep the old record's value for "
    "one field of a record construction",
    "return-early": "an action (or a handler with an explicit empty result) returns that result at the start of one "
    "if-branch",
    "drop-successor": "drop one yield, or one append of a successor in an action",
}

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_UPDATE_NAMES = ("evolve", "_replace", "replace")
_SKIP_FIELDS = ("annotation", "returns", "type_comment", "decorator_list")

Path = tuple[tuple[str, int | None], ...]


@attrs.frozen
class Site:
    """One proposed change: replace the node at ``path`` by ``replacement`` (an expression, or for a statement in a
    block a list of statements).  ``cover_lines``: if none of these lines ever ran in the original model, the change
    cannot alter any run."""

    operator: str
    function: str
    path: Path
    replacement: Any = attrs.field(eq=False, repr=False)
    original: str
    mutated: str
    line: int
    col: int
    end_line: int
    cover_lines: tuple[int, ...]


@attrs.frozen
class FunctionInfo:
    """What the walker knows about the function it is in: ``role`` is ``action`` (registered on the model),
    ``handler`` (has an explicit empty result: ``return None`` or a generator) or ``plain``; ``empty`` is the
    statement that returns the empty result."""

    qualname: str
    role: str
    empty: ast.stmt | None = attrs.field(eq=False, default=None)


# role of a def: (name, candidate first lines) -> "action" | "skip" | "plain"
RoleOf = Callable[[str, tuple[int, ...]], str]
# record fields of the class a name or attribute expression refers to, or None
FieldsOf = Callable[[ast.expr], tuple[str, ...] | None]


def text(node: ast.AST) -> str:
    return ast.unparse(node)


def header(node: ast.stmt) -> str:
    """The first line of a statement's text (the header of a compound statement)."""
    return text(node).split("\n", 1)[0]


def is_variant_read(node: ast.expr) -> bool:
    """``ctx.on(NAME)``, ``NAME in ctx.variants`` (or ``not in``), their negations and conjunctions of them."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "on":
        return len(node.args) == 1 and not node.keywords
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        right = node.comparators[0]
        return isinstance(right, ast.Attribute) and right.attr == "variants"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return is_variant_read(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(is_variant_read(v) for v in node.values)
    return False


def _int_value(node: ast.AST) -> int | None:
    """The value of an int literal (``3``, ``-1``), bools excluded."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_value(node.operand)
        return -inner if inner is not None and isinstance(node.operand, ast.Constant) else None
    return None


def _loc(new: ast.AST, old: ast.AST) -> Any:
    """Give ``new`` and every child without a location ``old``'s location (so compile keeps the file's lines)."""
    for n in ast.walk(new):
        if not hasattr(n, "lineno") and "lineno" in n._attributes:
            ast.copy_location(n, old)
    return ast.copy_location(new, old)


def _end_line(node: ast.AST) -> int:
    end: int | None = getattr(node, "end_lineno", None)
    return end if end is not None else int(getattr(node, "lineno", 0))


def _span(node: ast.AST) -> tuple[int, ...]:
    first = getattr(node, "lineno", 0)
    return tuple(range(first, (getattr(node, "end_lineno", None) or first) + 1))


def _is_generator(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fn))


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of functions or lambdas nested in it."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))


def empty_result(fn: ast.FunctionDef | ast.AsyncFunctionDef, action: bool) -> ast.stmt | None:
    """The statement returning a function's empty result: a bare ``return`` for a generator; for an action that
    collects successors in a list (``out = []`` ... ``return out``), ``return out``; for a handler with an explicit
    ``return None``, ``return None``.  None when the function has no such result."""
    if _is_generator(fn):
        return ast.Return(value=None)
    returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return)]
    if action:
        lists = {t.id for n in _own_nodes(fn) for t, v in _assignments(n)
                 if isinstance(t, ast.Name) and isinstance(v, ast.List) and not v.elts}
        for r in returns:
            if isinstance(r.value, ast.Name) and r.value.id in lists:
                return ast.Return(value=ast.Name(r.value.id, ast.Load()))
        return ast.Return(value=ast.List([], ast.Load()))
    if any(r.value is None or (isinstance(r.value, ast.Constant) and r.value.value is None) for r in returns):
        return ast.Return(value=ast.Constant(None))
    return None


def _assignments(n: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    if isinstance(n, ast.Assign):
        return [(t, n.value) for t in n.targets]
    if isinstance(n, ast.AnnAssign) and n.value is not None:
        return [(n.target, n.value)]
    return []


class Walker:
    """Walks one module and yields every ``Site`` in a fixed order (source order of the tree)."""

    def __init__(self, role_of: RoleOf, fields_of: FieldsOf) -> None:
        self.role_of = role_of
        self.fields_of = fields_of

    def sites(self, tree: ast.Module) -> Iterator[Site]:
        for i, stmt in enumerate(tree.body):
            yield from self._toplevel(stmt, (("body", i),), "")

    def _toplevel(self, stmt: ast.stmt, path: Path, prefix: str) -> Iterator[Site]:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from self._function(stmt, path, prefix, None)
        elif isinstance(stmt, ast.ClassDef):
            for i, inner in enumerate(stmt.body):
                yield from self._toplevel(inner, (*path, ("body", i)), f"{prefix}{stmt.name}.")

    def _function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, path: Path, prefix: str,
                  outer: FunctionInfo | None) -> Iterator[Site]:
        lines = (fn.lineno, *(d.lineno for d in fn.decorator_list))
        role = self.role_of(fn.name, lines) if outer is None else "plain"
        if role == "skip":
            return
        qual = f"{outer.qualname}.{fn.name}" if outer else f"{prefix}{fn.name}"
        empty = empty_result(fn, role == "action")
        if role != "action" and empty is not None:
            role = "handler"
        info = FunctionInfo(qual, role, empty)
        guards = self._guards(fn)
        for i, stmt in enumerate(fn.body):
            yield from self._node(stmt, (*path, ("body", i)), info, guards)

    @staticmethod
    def _guards(fn: ast.AST) -> set[int]:
        """ids of the ``and`` nodes that are part of a guard (a test or a returned condition)."""
        tests: list[ast.AST] = []
        for n in _own_nodes(fn):
            if isinstance(n, (ast.If, ast.While, ast.IfExp)):
                tests.append(n.test)
            elif isinstance(n, ast.comprehension):
                tests.extend(n.ifs)
            elif isinstance(n, ast.Return) and n.value is not None:
                tests.append(n.value)
        return {id(b) for t in tests for b in ast.walk(t) if isinstance(b, ast.BoolOp) and isinstance(b.op, ast.And)}

    def _node(self, node: ast.AST, path: Path, fn: FunctionInfo, guards: set[int],
              parent: ast.AST | None = None) -> Iterator[Site]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from self._function(node, path, "", fn)
            return
        if isinstance(node, ast.ClassDef) or (isinstance(node, ast.expr) and is_variant_read(node)):
            return
        yield from self._propose(node, path, fn, guards, parent)
        skip = _index_literals(node)
        for field, value in ast.iter_fields(node):
            if field in _SKIP_FIELDS:
                continue
            if isinstance(value, ast.AST):
                if id(value) not in skip:
                    yield from self._node(value, (*path, (field, None)), fn, guards, node)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST) and id(item) not in skip:
                        yield from self._node(item, (*path, (field, i)), fn, guards, node)

    # ---- the operators ------------------------------------------------------------------------------------------
    def _propose(self, node: ast.AST, path: Path, fn: FunctionInfo, guards: set[int],
                 parent: ast.AST | None) -> Iterator[Site]:
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            yield from self._negate(node.test, (*path, ("test", None)), fn)
        if isinstance(node, ast.If) and fn.empty is not None and not is_variant_read(node.test):
            yield from self._return_early(node, path, fn)
        if isinstance(node, ast.comprehension):
            for i, cond in enumerate(node.ifs):
                yield from self._negate(cond, (*path, ("ifs", i)), fn)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and id(node) in guards:
            yield from self._drop_conjunct(node, path, fn)
        if isinstance(node, ast.Compare):
            yield from self._flip(node, path, fn)
        value = _int_value(node)
        if value is not None:
            for delta in (1, -1):
                new = _loc(ast.Constant(value + delta), node)
                if isinstance(parent, ast.expr):  # the text of the expression around it says which constant
                    yield self._site("shift-constant", fn, path, node, new, original=text(parent),
                                     mutated=text(_with_child(parent, path[-1:], new)))
                else:
                    yield self._site("shift-constant", fn, path, node, new)
        if isinstance(node, ast.Subscript):
            yield from self._shift_index(node, path, fn)
        if isinstance(node, ast.Call):
            yield from self._skip_update(node, path, fn)
        if isinstance(node, ast.Expr):
            yield from self._drop_successor(node, path, fn)

    def _site(self, op: str, fn: FunctionInfo, path: Path, old: ast.AST, new: Any,
              original: str | None = None, mutated: str | None = None,
              cover: tuple[int, ...] | None = None) -> Site:
        return Site(
            operator=op, function=fn.qualname, path=path, replacement=new,
            original=original if original is not None else text(old),
            mutated=mutated if mutated is not None else text(new),
            line=getattr(old, "lineno", 0), col=getattr(old, "col_offset", 0),
            end_line=_end_line(old),
            cover_lines=cover if cover is not None else _span(old),
        )

    def _negate(self, test: ast.expr, path: Path, fn: FunctionInfo) -> Iterator[Site]:
        if is_variant_read(test):
            return
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)):
            return  # its negation is the flip-compare mutant
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            new: ast.expr = test.operand
        else:
            new = _loc(ast.UnaryOp(ast.Not(), test), test)
        yield self._site("negate-condition", fn, path, test, new)

    def _drop_conjunct(self, node: ast.BoolOp, path: Path, fn: FunctionInfo) -> Iterator[Site]:
        for k, operand in enumerate(node.values):
            if is_variant_read(operand):
                continue
            rest = node.values[:k] + node.values[k + 1:]
            new = rest[0] if len(rest) == 1 else _loc(ast.BoolOp(ast.And(), rest), node)
            yield self._site("drop-conjunct", fn, path, node, new)

    def _flip(self, node: ast.Compare, path: Path, fn: FunctionInfo) -> Iterator[Site]:
        if is_variant_read(node):
            return
        for k, op in enumerate(node.ops):
            flipped = _FLIP.get(type(op))
            if flipped is None:
                continue
            ops = [*node.ops[:k], flipped(), *node.ops[k + 1:]]
            yield self._site("flip-compare", fn, path, node, _loc(ast.Compare(node.left, ops, node.comparators), node))

    def _shift_index(self, node: ast.Subscript, path: Path, fn: FunctionInfo) -> Iterator[Site]:
        sl = node.slice
        bounds: list[tuple[Path, ast.expr]] = []
        if isinstance(sl, ast.Slice):
            bounds = [((*path, ("slice", None), (f, None)), b) for f in ("lower", "upper")
                      if (b := getattr(sl, f)) is not None]
        elif not isinstance(sl, ast.Tuple) and not (isinstance(sl, ast.Constant) and not isinstance(sl.value, int)):
            bounds = [((*path, ("slice", None)), sl)]
        for bpath, b in bounds:
            value = _int_value(b)
            for delta, op in ((1, ast.Add()), (-1, ast.Sub())):
                if value is not None:
                    new: ast.expr = _loc(ast.Constant(value + delta), b)
                else:
                    new = _loc(ast.BinOp(b, op, ast.Constant(1)), b)
                yield self._site("shift-index", fn, bpath, b, new, original=text(node),
                                 mutated=text(_with_child(node, bpath[len(path):], new)))

    def _skip_update(self, node: ast.Call, path: Path, fn: FunctionInfo) -> Iterator[Site]:
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        kws = node.keywords
        if (name in _UPDATE_NAMES or name.startswith("with_")) and len(node.args) <= 1 and kws \
                and all(k.arg for k in kws):
            for k in range(len(kws)):
                new = _loc(ast.Call(node.func, node.args, kws[:k] + kws[k + 1:]), node)
                yield self._site("skip-update", fn, path, node, new)
            return
        # record construction: Record(f=a, g=b, ...), Record(a, b, ...) or new(Record, (a, b, ...))
        elts: list[ast.expr] = []
        base: Path = path
        fields = self.fields_of(node.func)
        if fields is not None and kws and not node.args and all(k.arg for k in kws):
            names = tuple(str(kw.arg) for kw in kws)
            was = _old_record([kw.value for kw in kws], names)
            if was is None:
                return
            for i, kw in enumerate(kws):
                kept = _loc(ast.Attribute(ast.Name(was, ast.Load()), names[i], ast.Load()), kw.value)
                if text(kept) != text(kw.value):
                    yield self._site("skip-update", fn, (*path, ("keywords", i), ("value", None)), kw.value, kept,
                                     original=f"{names[i]}={text(kw.value)}", mutated=f"{names[i]}={text(kept)}")
            return
        if fields is not None and not kws and len(node.args) <= len(fields):
            elts, base = list(node.args), (*path, ("args", None))
        elif len(node.args) == 2 and isinstance(node.args[1], ast.Tuple) and not kws:
            fields = self.fields_of(node.args[0])
            if fields is not None and len(node.args[1].elts) == len(fields):
                elts, base = list(node.args[1].elts), (*path, ("args", 1), ("elts", None))
        if not elts or fields is None:
            return
        old = _old_record(elts, fields)
        if old is None:
            return
        for i, elt in enumerate(elts):
            kept = _loc(ast.Attribute(ast.Name(old, ast.Load()), fields[i], ast.Load()), elt)
            if text(kept) != text(elt):
                epath = (*base[:-1], (base[-1][0], i))
                yield self._site("skip-update", fn, epath, elt, kept, original=f"{fields[i]}={text(elt)}",
                                 mutated=f"{fields[i]}={text(kept)}")

    def _return_early(self, node: ast.If, path: Path, fn: FunctionInfo) -> Iterator[Site]:
        first = node.body[0]
        assert fn.empty is not None
        ret = _loc(_copy(fn.empty), first)
        if isinstance(first, ast.Return) and text(first) == text(ret):
            return
        head = f"if {text(node.test)}:"
        yield self._site("return-early", fn, (*path, ("body", 0)), node, [ret, first], original=head,
                         mutated=f"{head} {text(ret)}", cover=(first.lineno,))

    def _drop_successor(self, node: ast.Expr, path: Path, fn: FunctionInfo) -> Iterator[Site]:
        value = node.value
        if isinstance(value, (ast.Yield, ast.YieldFrom)):
            if isinstance(value, ast.YieldFrom) and isinstance(value.value, ast.Tuple) and not value.value.elts:
                return
            new: ast.stmt = _loc(ast.Expr(ast.YieldFrom(ast.Tuple([], ast.Load()))), node)
        elif fn.role == "action" and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr == "append":
            new = _loc(ast.Pass(), node)
        else:
            return
        yield self._site("drop-successor", fn, path, node, [new])


def _index_literals(node: ast.AST) -> set[int]:
    """ids of the int literals that are a subscript's index or slice bounds (shift-index changes them) and of the
    literal inside ``-n`` (shift-constant changes ``-n`` as one)."""
    out: set[int] = set()
    if isinstance(node, ast.Subscript):
        sl = node.slice
        for b in ([sl.lower, sl.upper] if isinstance(sl, ast.Slice) else [sl]):
            if b is not None and _int_value(b) is not None:
                out.add(id(b))
    if isinstance(node, ast.UnaryOp) and _int_value(node) is not None:
        out.add(id(node.operand))
    return out


def _old_record(elts: list[ast.expr], fields: tuple[str, ...]) -> str | None:
    """The name of the record being rebuilt: a name ``o`` such that some argument at position j is ``o.<field j>``."""
    for j, e in enumerate(elts):
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and j < len(fields) and e.attr == fields[j]:
            return e.value.id
    return None


def _copy(node: ast.stmt) -> ast.stmt:
    return ast.parse(ast.unparse(node)).body[0]


def _with_child(node: ast.AST, rel: Path, new: ast.expr) -> ast.AST:
    """A shallow copy of ``node`` with the child at relative path ``rel`` replaced (for the mutated text only)."""
    import copy

    top = copy.copy(node)
    cur: Any = top
    for depth, (field, index) in enumerate(rel):
        last = depth == len(rel) - 1
        if index is None:
            child = new if last else copy.copy(getattr(cur, field))
            setattr(cur, field, child)
        else:
            items = list(getattr(cur, field))
            items[index] = new if last else copy.copy(items[index])
            setattr(cur, field, items)
            child = items[index]
        cur = child
    return top
