"""The griffe extension that prepares the docstrings of pga_dyn, drng, robots and identification
for the site's API reference (mkdocs.yml: ``mkdocstrings`` -> ``extensions``); the docstrings stay as they are.

The docstrings are written for Sphinx and numpydoc: roles such as ``:func:`nullspace``` name
other objects, constants carry a ``#:`` comment above them, and classes document their fields
in a numpydoc ``Attributes`` section. mkdocstrings knows none of the three, so this extension,
once a package is loaded (griffe's ``on_package``):

1. gives each attribute without a docstring the ``#:`` comment above it (Sphinx's convention),
   and each field of a class without a docstring its entry of the class's ``Attributes``
   section, so that they are shown;
2. rewrites each role ``:func:`name``` (``func``, ``class``, ``meth``, ``attr``, ``data``,
   ``mod``, ``exc``, ``obj``, ``const``) into a Markdown cross-reference ``[`name()`][path]``
   that mkdocs-autorefs turns into a link. ``name`` is resolved as Sphinx does: relative to the
   docstring's object (its members, its module's names and imports, then its parents), or as a
   full dotted path; the lazy names of a package (its ``_LAZY`` table, ``pga_dyn.lazy``) resolve
   to the modules they come from. ``~name`` shows only the last component, ``func`` and ``meth``
   get ``()``. A name that resolves to an object not shown on the site (private, outside the
   three packages such as ``networkx.MultiDiGraph``) becomes plain code; a name of the three
   packages that resolves to nothing is logged as a warning, which fails ``mkdocs build
   --strict``;
3. writes each ``<`` outside code as ``&lt;`` (Markdown would read ``<dc/dW_i, ...>`` as HTML);
4. puts the first sentence of each docstring alone on its first line (the summary tables of
   mkdocstrings show that line; the rendered paragraph is the same);
5. parses the docstrings (numpydoc, as mkdocs.yml says) for mkdocstrings, keeping each type
   of a Parameters, Attributes or Returns entry as written where griffe would show it
   otherwise: ``ndarray (n + 1,)`` is not the call ``ndarray(n + 1)``, and ``None, array_like
   (n_a, 2) or dict`` is not a tuple.

``tests/test_site.py`` builds the site and checks that no role is left in its HTML.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Any

import griffe

#: The packages of the API reference (docs/api/*.md); names of other packages are not linked.
PACKAGES = ("pga_dyn", "drng", "robots", "identification")
#: A Sphinx role with its target: ``:func:`~drng.nullspace```.
ROLE = re.compile(r":(?:py:)?(func|class|meth|attr|data|mod|exc|obj|const):`(~?)([\w.]+)`")

logger = griffe.get_logger("api_docstrings")


def escape_angles(text: str) -> str:
    """``<`` that would open a tag (``<`` then a letter or ``/``), outside code spans, as ``&lt;``:
    the docstrings hold no HTML, and Markdown would take the math ``<dc/dW_i, dW_i/dq_j>`` for
    a tag and drop it (``<=`` and ``a < b`` Markdown shows as they are)."""
    parts = re.split(r"(``.*?``|`[^`]*`)", text, flags=re.S)
    return "".join(part if k % 2 else re.sub(r"<(?=[A-Za-z/!?])", "&lt;", part) for k, part in enumerate(parts))


def summary_first(text: str) -> str:
    """The docstring with its first sentence alone on its first line: the lines of its first
    paragraph joined, then broken after the first sentence. Markdown renders the paragraph as
    before; the summary tables (mkdocs.yml: ``summary``) show the first line, which is now the
    first sentence, not its first 90 characters. A first paragraph that is a list is kept."""
    head, sep, rest = text.partition("\n\n")
    lines = head.splitlines()
    if len(lines) < 2 or any(line[:1].isspace() or line.startswith(("* ", "- ", ">>>")) for line in lines):
        return text
    joined = " ".join(line.strip() for line in lines)
    end = re.search(r"(?<!e\.g)(?<!i\.e)(?<!\bcf)\.\s+(?=[A-Z`\[])", joined)
    if end is not None:
        joined = joined[: end.start() + 1] + "\n" + joined[end.end() :]
    return joined + sep + rest


def comment_above(attr: griffe.Attribute) -> str | None:
    """The ``#:`` comment lines right above an attribute's assignment, joined; else the comment
    at the end of a one-line assignment (``CENTRE = 28  # 72a-c: ...``); else None."""
    lines = attr.module.lines
    if not lines or not attr.lineno:
        return None
    found = []
    k = attr.lineno - 2
    while k >= 0 and lines[k].strip().startswith("#:"):
        found.append(lines[k].strip()[2:].strip())
        k -= 1
    if found:
        return " ".join(reversed(found))
    line = lines[attr.lineno - 1]
    if attr.endlineno == attr.lineno and "  # " in line and line.count('"') % 2 == 0 and "'" not in line:
        return line.split("  # ", 1)[1].strip() or None
    return None


def comment_docs(obj: griffe.Object) -> None:
    """Docstrings from comments for the attributes of a module or class that have none: the
    comment of :func:`comment_above`, or the one of a group of assignments (no blank line
    between them) whose first carries it (``#: ...`` above ``STAGE_DRAWS``, ``MIN_YIELD``,
    ``MIN_SCALE``)."""
    attributes = sorted(
        (m for m in obj.members.values() if not m.is_alias and m.is_attribute and m.lineno),
        key=lambda m: m.lineno,
    )
    previous = None
    for attr in attributes:
        if attr.docstring is None:
            text = comment_above(attr)
            if text is None and previous is not None and previous.endlineno == attr.lineno - 1:
                text = previous.docstring.value if previous.docstring is not None else None
            if text is not None:
                attr.docstring = griffe.Docstring(text, parent=attr)
        previous = attr


def field_docs(cls: griffe.Class) -> dict[str, str]:
    """Field name -> description, from the ``Attributes`` section of a class's docstring
    (an entry ``a, b : type`` documents both; an entry without a description gives its type)."""
    if cls.docstring is None:
        return {}
    docs = {}
    for section in griffe.parse_numpy(cls.docstring, warnings=False):
        if section.kind is griffe.DocstringSectionKind.attributes:
            for entry in section.value:
                text = entry.description or (str(entry.annotation) if entry.annotation else "")
                for name in entry.name.split(","):
                    if text:
                        docs[name.strip()] = text
    return docs


def written_types(text: str) -> tuple[dict[str, str], list[str]]:
    """The types of the entries of a docstring's numpydoc sections, as written: name -> type of
    the ``names : type`` entries (an entry ``a, b : type`` under ``a, b``, ``a`` and ``b``), and
    the types of the entries without a name (``type`` alone, in Returns), in order. An entry is
    a line at the indentation of its section's title."""
    lines = text.splitlines()
    named: dict[str, str] = {}
    unnamed: list[str] = []
    inside = False
    for k, line in enumerate(lines):
        if not line.strip() or line[:1].isspace() or set(line.strip()) == {"-"}:
            continue
        if k + 1 < len(lines) and set(lines[k + 1].strip()) == {"-"}:
            inside = True  # a section's title
        elif inside:
            names, colon, kind = line.partition(" : ")
            if colon:
                for name in [names, *names.split(",")]:
                    named[name.strip()] = kind.strip()
            else:
                unnamed.append(line.strip())
    return named, unnamed


def parse_keeping_types(docstring: griffe.Docstring) -> list:
    """The docstring's numpydoc sections (griffe's parser) with each type that griffe would show
    other than written (``ndarray (n,)`` read as a call ``ndarray(n)``) kept as written; types
    griffe shows as written (``Robot``, ``int or None``) stay expressions, linked."""
    sections = griffe.parse_numpy(docstring)
    named, unnamed = written_types(docstring.value)
    unnamed = iter(unnamed)
    for section in sections:
        if not isinstance(section.value, list):
            continue
        for entry in section.value:
            annotation = getattr(entry, "annotation", None)
            if not isinstance(annotation, griffe.Expr):
                continue
            name = getattr(entry, "name", "")
            text = named.get(name) if name else next(unnamed, None)
            if text and str(annotation) != text:
                entry.annotation = text
    return sections


def walk(obj: griffe.Object):
    """The object and all its members (not aliases), depth first."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from walk(member)


def lazy_table(module: griffe.Module) -> dict[str, str]:
    """A package's ``_LAZY`` table (public name -> submodule), empty when it has none."""
    table = module.members.get("_LAZY")
    if table is None or table.is_alias or not getattr(table, "value", None):
        return {}
    try:
        return ast.literal_eval(str(table.value))
    except (ValueError, SyntaxError):
        return {}


class Resolver:
    """Finds the object a role names, and whether the site shows it."""

    def __init__(self, loader: griffe.GriffeLoader):
        self.loader = loader

    def lookup(self, path: str) -> griffe.Object | None:
        """The object at a full dotted path, through aliases and lazy names; None if none."""
        parts = path.split(".")
        if parts[0] not in PACKAGES:
            return None
        if parts[0] not in self.loader.modules_collection.members:
            self.loader.load(parts[0])
        obj = self.loader.modules_collection.members[parts[0]]
        for part in parts[1:]:
            obj = self.final(obj)
            if part in obj.members:
                obj = obj.members[part]
            elif obj.is_module and part in lazy_table(obj):
                obj = self.lookup(f"{obj.path}.{lazy_table(obj)[part]}.{part}")
                if obj is None:
                    return None
            else:
                return None
        return self.final(obj)

    @staticmethod
    def final(obj):
        """An alias's target (the object itself for a non-alias)."""
        if obj.is_alias:
            try:
                return obj.final_target
            except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                return obj
        return obj

    def resolve(self, scope: griffe.Object, name: str) -> griffe.Object | None:
        """The object ``name`` names in the docstring of ``scope`` (Sphinx's search order)."""
        first, _, rest = name.partition(".")
        where = scope
        while where is not None:
            path = None
            if first in where.members:
                path = f"{where.path}.{first}"
            elif where.is_module and first in lazy_table(where):
                path = f"{where.path}.{first}"
            elif where.is_module and first in where.imports:
                path = where.imports[first]
            if path is not None:
                obj = self.lookup(f"{path}.{rest}" if rest else path)
                if obj is not None:
                    return obj
            where = where.parent
        return self.lookup(name)

    @staticmethod
    def imported_from_outside(scope: griffe.Object, name: str) -> bool:
        """Whether ``name``'s first component is imported, in ``scope``'s module or a parent,
        from outside the three packages (``Generator`` from numpy.random)."""
        first = name.split(".")[0]
        where = scope
        while where is not None:
            if where.is_module and first in where.imports:
                return where.imports[first].split(".")[0] not in PACKAGES
            where = where.parent
        return False

    @staticmethod
    def shown(obj: griffe.Object) -> bool:
        """Whether the site renders the object (mkdocs.yml: public members with a docstring)."""
        if obj.is_alias or obj.package.name not in PACKAGES:
            return False
        if any(part.startswith("_") for part in obj.path.split(".")):
            return False
        if obj.path.startswith("pga_dyn.cli"):
            return False
        return obj.has_docstrings if (obj.is_class or obj.is_module) else obj.has_docstring


class ApiDocstrings(griffe.Extension):
    """The extension: ``#:`` comments and Attributes entries as docstrings, roles as links."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.name not in PACKAGES:
            return
        for obj in walk(pkg):
            if obj.is_module or obj.is_class:
                comment_docs(obj)
            if obj.is_class:
                for name, text in field_docs(obj).items():
                    member = obj.members.get(name)
                    if member is not None and not member.is_alias and member.docstring is None:
                        member.docstring = griffe.Docstring(text, parent=member)
        resolver = Resolver(loader)
        for obj in walk(pkg):
            if obj.docstring is not None and Resolver.shown(obj):
                text = ROLE.sub(lambda m, obj=obj: self.link(resolver, obj, m), obj.docstring.value)
                obj.docstring.value = summary_first(escape_angles(text))
        for obj in walk(pkg):
            if obj.docstring is not None and Resolver.shown(obj):
                # what mkdocstrings renders (Docstring.parsed is computed once, here)
                obj.docstring.parsed = parse_keeping_types(obj.docstring)

    @staticmethod
    def link(resolver: Resolver, scope: griffe.Object, match: re.Match) -> str:
        """The Markdown of one role."""
        role, short, name = match.groups()
        text = name.rsplit(".", 1)[-1] if short else name
        if role in ("func", "meth"):
            text += "()"
        target = resolver.resolve(scope, name)
        if target is None and (name in dir(builtins) or resolver.imported_from_outside(scope, name)):
            return f"`{text}`"
        if target is None:
            if "." not in name or name.split(".")[0] in PACKAGES:
                # a relative name, or a name of ours, that names nothing: a broken reference
                logger.warning("%s: %s names no object", scope.path, match.group(0))
            return f"`{text}`"
        if not resolver.shown(target):
            return f"`{text}`"
        return f"[`{text}`][{target.path}]"
