"""Expand a matrix (axes + include/exclude rules) into cells, in one place."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from .config import Cipher, ConfigError, Lab, MatrixFile, Rule


@dataclass(frozen=True, order=True)
class Cell:
    """One (cipher x implementation x toolchain x target) measurement."""

    cipher: str
    implementation: str  # strategy name
    toolchain: str
    target: str
    key_sizes: tuple[int, ...]

    @property
    def impl_name(self) -> str:
        return f"{self.cipher}/{self.implementation}"

    @property
    def id(self) -> str:
        return f"{self.cipher}/{self.implementation}@{self.toolchain}@{self.target}"


def _matches(sel, value: str) -> bool:
    if sel is None:
        return True
    values = [sel] if isinstance(sel, str) else sel
    return any(fnmatch.fnmatchcase(value, v) for v in values)


def rule_matches(rule: Rule, cipher: str, impl: str, toolchain: str, target: str) -> bool:
    return (
        _matches(rule.cipher, cipher)
        and (_matches(rule.implementation, impl) or _matches(rule.implementation, f"{cipher}/{impl}"))
        and _matches(rule.toolchain, toolchain)
        and _matches(rule.target, target)
    )


def _key_sizes(cipher: Cipher, wanted) -> tuple[int, ...]:
    own = tuple(cipher.spec.key_bits)
    if wanted == "all":
        return own
    both = tuple(k for k in own if k in wanted)
    return both or own  # a cipher with none of the wanted sizes (DES) keeps its own


def _strategies(cipher: Cipher, implementations) -> list[str]:
    if implementations == "default":
        return [cipher.default_impl]
    if implementations == "all":
        return list(cipher.spec.implementations)
    picked = []
    for name in implementations:
        c, _, s = name.partition("/")
        if c == cipher.name:
            if s not in cipher.spec.implementations:
                raise ConfigError("matrix.yaml", "implementations", f"'{name}' is not an implementation.",
                                  f"use one of {[f'{c}/{k}' for k in cipher.spec.implementations]}")
            picked.append(s)
    return picked or [cipher.default_impl]


def expand(lab: Lab, m: MatrixFile) -> list[Cell]:
    """Product of the axes, minus excluded cells, plus included ones (deduplicated, sorted)."""
    cipher_names = lab.cipher_names() if m.ciphers == "all" else list(m.ciphers)
    ciphers = {n: lab.cipher(n) for n in cipher_names}
    cells: dict[str, Cell] = {}
    for cname, cipher in ciphers.items():
        for strategy in _strategies(cipher, m.implementations):
            for tc in m.toolchains:
                for tg in m.targets:
                    if any(rule_matches(r, cname, strategy, tc, tg) for r in m.exclude):
                        continue
                    cell = Cell(cname, strategy, tc, tg, _key_sizes(cipher, m.key_sizes))
                    cells[cell.id] = cell
    # include rules add cells over every known value of the axes they leave open
    for rule in m.include:
        for cname in lab.cipher_names():
            if not _matches(rule.cipher, cname):
                continue
            cipher = ciphers.get(cname) or lab.cipher(cname)
            for strategy in cipher.spec.implementations:
                if rule.implementation is None and rule.cipher is not None:
                    if strategy != cipher.default_impl:
                        continue
                for tc in m.toolchains if rule.toolchain is None else lab.toolchain_names():
                    for tg in m.targets if rule.target is None else lab.target_names():
                        if rule_matches(rule, cname, strategy, tc, tg):
                            cell = Cell(cname, strategy, tc, tg, _key_sizes(cipher, m.key_sizes))
                            cells[cell.id] = cell
    return sorted(cells.values())
