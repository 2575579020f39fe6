"""One owner for the office an Agent is in: only the membership module changes it.

Leaving used to be written out at every path that leaves (a leave, a close, a lost link,
a refusal that ends the agent), each clearing a slightly different set of state; every
one of them now goes through ``_vacate``.
"""

import ast
from pathlib import Path

import a2c_agent

SOURCE = Path(a2c_agent.__file__).parent
OWNER = Path("_session") / "_membership.py"


def _writes_of_office(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.AugAssign)
            else []
        )
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr == "_office":
                lines.append(node.lineno)
    return lines


def test_only_the_membership_module_changes_the_office() -> None:
    writers = {}
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = _writes_of_office(tree)
        if lines:
            writers[str(path.relative_to(SOURCE))] = lines
    assert list(writers) == [str(OWNER)], writers
    # Starting out of any office (the constructor), entering (join) and vacate.
    assert len(writers[str(OWNER)]) == 3, writers
