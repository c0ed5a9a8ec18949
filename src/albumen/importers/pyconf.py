"""The literal assignments of a Python configuration file, read with `ast`, never executed.

A Python configuration can do anything when run (import modules, read the environment, write
files). Its settings are nearly always literals, and those can be read from the syntax tree alone:
strings (concatenated too), numbers (negative ones too), True/False/None, tuples, lists, sets and
dicts of them. Anything whose value only running the file would give (a call, a name, an
f-string with fields, a comprehension, an attribute, a subscript...) is reported with what it is,
and its setting is left out.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from typing import Any

from ..errors import AlbumenError


class PyConfSyntaxError(AlbumenError):
    """The file is not valid Python: nothing can be read from it."""

    exit_code = 2


@dataclass(frozen=True)
class Assigned:
    """One setting's literal value, the lines that gave it (first and last) and their source text."""

    value: Any
    line: int
    end_line: int
    source: str


@dataclass(frozen=True)
class Unread:
    """A name the file sets to something only running it would give (or sets where only running it
    decides whether it is set: inside an if, a loop, a function)."""

    name: str
    line: int
    why: str


@dataclass
class PyConf:
    values: dict[str, Assigned] = field(default_factory=dict)
    unread: dict[str, Unread] = field(default_factory=dict)
    statements: list[Unread] = field(default_factory=list)  # statements that set no name and were not run


class _Computed(Exception):
    def __init__(self, node: ast.AST, what: str) -> None:
        super().__init__(what)
        self.node = node
        self.what = what


_NODE_NAMES = {
    ast.Call: "a call", ast.Name: "a name", ast.Attribute: "an attribute", ast.Subscript: "a subscript",
    ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension", ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression", ast.Lambda: "a lambda", ast.IfExp: "a conditional expression",
    ast.JoinedStr: "an f-string", ast.BoolOp: "a boolean operation", ast.Compare: "a comparison",
    ast.Starred: "an unpacking (*)", ast.NamedExpr: "an assignment expression", ast.Await: "an await",
    ast.Yield: "a yield", ast.YieldFrom: "a yield", ast.Slice: "a slice", ast.BinOp: "an operation",
    ast.UnaryOp: "an operation",
}
_ADD_TYPES = ((str, str), (list, list), (tuple, tuple))


def describe(node: ast.AST, source: str, what: str = "") -> str:
    """'a call (os.path.join(ROOT, "pictures"))': what an expression is, and its text."""
    what = what or _NODE_NAMES.get(type(node), f"an expression of kind {type(node).__name__}")
    return f"{what} ({_text(node, source)})"


def literal(node: ast.AST) -> Any:
    """The value of a literal expression; raises _Computed naming the first part that is not one."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes) or node.value is Ellipsis:
            raise _Computed(node, "a bytes or ... constant")
        return node.value
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(v.value for v in node.values)  # an f-string without fields is a plain string
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [literal(item) for item in node.elts]
        if isinstance(node, ast.Set):
            try:
                return set(items)
            except TypeError:
                raise _Computed(node, "a set of unhashable items") from None
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        out = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise _Computed(value, "an unpacking (**)")  # the text shown is the unpacked value
            k = literal(key)
            try:
                out[k] = literal(value)
            except TypeError:
                raise _Computed(key, "an unhashable key") from None
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = literal(node.operand)
        if isinstance(operand, (int, float, complex)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = literal(node.left), literal(node.right)
        numbers = all(isinstance(v, (int, float, complex)) and not isinstance(v, bool) for v in (left, right))
        if numbers:
            return (operator.add if isinstance(node.op, ast.Add) else operator.sub)(left, right)
        if isinstance(node.op, ast.Add) and any(isinstance(left, a) and isinstance(right, b) for a, b in _ADD_TYPES):
            return left + right
    raise _Computed(node, "")


def read_pyconf(raw: bytes, filename: str) -> PyConf:
    """The literal settings of a Python file's top-level statements, in order: a later assignment
    replaces an earlier one, as running the file would. Raises PyConfSyntaxError naming the line
    when the file is not valid Python."""
    try:
        tree = ast.parse(raw, filename=filename)
    except (SyntaxError, ValueError) as exc:  # ValueError: NUL bytes in the source
        line = getattr(exc, "lineno", None)
        where = f"line {line}" + (f", column {exc.offset}" if getattr(exc, "offset", None) else "") if line else ""
        message = getattr(exc, "msg", None) or str(exc)
        raise PyConfSyntaxError(
            f"not valid Python{' at ' + where if where else ''}: {message}; nothing was read",
            path=filename,
            hint="fix that line (Sigal would not run this file either), then import it again",
        ) from None
    source = raw.decode(_source_encoding(raw), errors="replace")
    conf = PyConf()
    for stmt in tree.body:
        _statement(stmt, source, conf)
    return conf


def _source_encoding(raw: bytes) -> str:
    import io
    import tokenize

    try:
        return tokenize.detect_encoding(io.BytesIO(raw).readline)[0]
    except SyntaxError:
        return "utf-8"


def _set(conf: PyConf, name: str, value: Any, stmt: ast.stmt, source: str, before: Assigned | None = None) -> None:
    text = ast.get_source_segment(source, stmt) or ast.unparse(stmt)
    end = stmt.end_lineno or stmt.lineno
    if before is not None:  # `plugins += [...]`: both statements made the value
        conf.values[name] = Assigned(value, before.line, end, f"{before.source}\n{text}")
    else:
        conf.values[name] = Assigned(value, stmt.lineno, end, text)
    conf.unread.pop(name, None)


def _unread(conf: PyConf, name: str, line: int, why: str) -> None:
    conf.unread[name] = Unread(name, line, why)
    conf.values.pop(name, None)


def _statement(stmt: ast.stmt, source: str, conf: PyConf) -> None:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return  # what they bring in is only used by computed values, which are reported
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return  # a docstring
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if stmt.value is None:  # `name: int` declares, sets nothing
            return
        try:
            value = literal(stmt.value)
            error = None
        except _Computed as exc:
            value, error = None, exc
        for target in targets:
            _assign(target, stmt.value, value, error, stmt, source, conf)
        return
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):  # plugins += [...]
        name = stmt.target.id
        before = conf.values.get(name)
        if before is None:
            _unread(conf, name, stmt.lineno, f"changed by {_text(stmt, source)} while its value is not known")
            return
        try:
            if not isinstance(stmt.op, (ast.Add, ast.Sub)):
                raise _Computed(stmt, "")
            value = literal(ast.BinOp(left=ast.Constant(before.value), op=stmt.op, right=stmt.value))
        except _Computed as exc:
            _unread(conf, name, stmt.lineno, f"computed: {describe(exc.node, source, exc.what)}")
            return
        _set(conf, name, value, stmt, source, before)
        return
    if isinstance(stmt, ast.Delete):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                conf.values.pop(target.id, None)
                conf.unread.pop(target.id, None)
        return
    # anything else (a call such as plugins.append(...), an if, a loop, a with): running it could set
    # or change settings; it is not run
    kind = _statement_kind(stmt)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = [stmt.name]  # what its body sets is its own
        changed: list[str] = []
    else:
        names = sorted({n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
        changed = sorted(_mutated_names(stmt) - set(names))
    for name in names:
        _unread(conf, name, stmt.lineno, f"set in {kind} (line {stmt.lineno})")
    for name in changed:
        _unread(conf, name, stmt.lineno, f"changed by {kind} ({_text(stmt, source)})")
    if not names and not changed:
        conf.statements.append(Unread("", stmt.lineno, f"{kind} ({_text(stmt, source)})"))


def _text(node: ast.AST, source: str, limit: int = 60) -> str:
    """A node's source text on one line, cut at limit characters."""
    text = " ".join((ast.get_source_segment(source, node) or ast.unparse(node)).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _assign(target: ast.expr, value_node: ast.expr, value: Any, error: _Computed | None, stmt: ast.stmt,
            source: str, conf: PyConf) -> None:
    if isinstance(target, ast.Name):
        if error is None:
            _set(conf, target.id, value, stmt, source)
        else:
            _unread(conf, target.id, stmt.lineno, f"computed: {describe(error.node, source, error.what)}")
        return
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts):
        # `a, b = 1, 2`: each name gets its item when the right side is a literal sequence of that length
        names = [t.id for t in target.elts]  # type: ignore[attr-defined]
        if error is None and isinstance(value, (tuple, list)) and len(value) == len(names):
            for name, item in zip(names, value, strict=True):
                _set(conf, name, item, stmt, source)
            return
        why = f"computed: {describe(error.node, source, error.what)}" if error else "unpacked from a value of another length"
        for name in names:
            _unread(conf, name, stmt.lineno, why)
        return
    # `settings['x'] = ...`, `obj.attr = ...`: changes something else; the name it changes is reported
    base = target
    while isinstance(base, (ast.Attribute, ast.Subscript)):
        base = base.value
    if isinstance(base, ast.Name):
        _unread(conf, base.id, stmt.lineno, f"changed by an assignment to a part of it ({_text(stmt, source)})")


def _mutated_names(stmt: ast.stmt) -> set[str]:
    """Names whose value a statement may change in place: plugins.append(...), x['k'] = v, del x[0]."""
    out = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            out.add(node.func.value.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                out.add(base.id)
    return out


def _statement_kind(stmt: ast.stmt) -> str:
    return {
        ast.If: "an if statement", ast.For: "a for loop", ast.AsyncFor: "a for loop", ast.While: "a while loop",
        ast.With: "a with statement", ast.AsyncWith: "a with statement", ast.Try: "a try statement",
        ast.FunctionDef: "a function definition", ast.AsyncFunctionDef: "a function definition",
        ast.ClassDef: "a class definition", ast.Expr: "an expression statement", ast.Global: "a global statement",
        ast.AugAssign: "an augmented assignment", ast.Assert: "an assert", ast.Raise: "a raise",
        ast.Match: "a match statement",
    }.get(type(stmt), f"a statement of kind {type(stmt).__name__}")
