"""Fail when the top-level modules of a crate import each other in a cycle.

Reads every `crate::<module>` path of the non-test code under each SRC (default: src)
and prints each strongly connected component of the import graph with its edges. The
compiler keeps the crates in layers; this keeps the modules inside each crate in
layers too (docs/architecture.md). `make lint` runs it on every crate.

    python3 scripts/module_cycles.py [SRC ...]
"""

import os
import re
import sys


def imports(src: str) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            module = os.path.relpath(path, src).split(os.sep)[0].removesuffix(".rs")
            if module in ("lib", "main"):
                continue
            with open(path) as f:
                text = re.sub(r"//[^\n]*", "", f.read())
            test = re.search(r"#\[cfg\(test\)\]\s*mod tests", text)
            if test:
                text = text[: test.start()]
            used = set(re.findall(r"crate::([a-z_0-9]+)", text))
            for group in re.findall(r"crate::\{([^}]*)\}", text):
                used.update(re.findall(r"\b([a-z_0-9]+)\b", group))
            graph.setdefault(module, set()).update(used - {module})
    for module in graph:
        graph[module] &= set(graph)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    failed = False
    for src in sys.argv[1:] or ["src"]:
        graph = imports(src)
        found = cycles(graph)
        for component in found:
            print(f"{src}: modules in a cycle: {', '.join(component)}")
            for module in component:
                print(f"  {module} -> {', '.join(sorted(graph[module] & set(component)))}")
        failed = failed or bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
