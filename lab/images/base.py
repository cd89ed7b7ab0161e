"""The base images ``debian:<suite>`` (bookworm for most targets, trixie for Debian 13's compilers): pulled when
a registry answers, else bootstrapped with mmdebstrap from the host's Debian mirrors."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Callable

from .engine import Engine, EngineError, _build_dir

BASE_IMAGE = "debian:bookworm"


def host_suite(os_release: Path = Path("/etc/os-release")) -> str:
    """The Debian suite (code name) of this machine, e.g. bookworm ('' when unknown)."""
    try:
        m = re.search(r"^VERSION_CODENAME=\"?([a-z]+)", os_release.read_text(), re.M)
    except OSError:
        return ""
    return m.group(1) if m else ""


def debian_sources(suite: str = "bookworm", paths: list[Path] | None = None, host: str | None = None) -> str:
    """The host's apt entries for Debian ``suite`` (and its -updates/-security), in deb822 form.

    Entries of other suites and other vendors (e.g. a cloud SDK's repository)
    are left out; one-line ``deb`` entries are converted.  A suite the host has
    no entries for (trixie on a bookworm host) gets the host's own suite's
    entries with the suite renamed: the same mirrors serve every release.
    """
    text = _debian_sources(suite, paths)
    host = host_suite() if host is None else host
    if not text and host and host != suite:
        text = re.sub(r"(?m)^(Suites:.*)$", lambda m: re.sub(rf"\b{host}\b", suite, m.group(1)),
                      _debian_sources(host, paths))
    return text


def _debian_sources(suite: str, paths: list[Path] | None) -> str:
    if paths is None:
        paths = sorted(Path("/etc/apt/sources.list.d").glob("*.sources")) + \
            sorted(Path("/etc/apt/sources.list.d").glob("*.list")) + [Path("/etc/apt/sources.list")]

    def ours(suites: list[str]) -> list[str]:
        return [s for s in suites if s == suite or s.startswith(suite + "-")]

    stanzas: list[str] = []
    for p in paths:
        try:
            text = p.read_text()
        except OSError:
            continue
        if p.suffix == ".sources":
            for block in text.split("\n\n"):
                fields: dict[str, str] = {}
                for line in block.splitlines():
                    if line.strip() and not line.startswith(("#", " ", "\t")) and ":" in line:
                        k, v = line.split(":", 1)
                        fields[k.strip().lower()] = v.strip()
                if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
                    continue
                suites = ours(fields.get("suites", "").split())
                if suites and fields.get("uris"):
                    stanza = f"Types: deb\nURIs: {fields['uris']}\nSuites: {' '.join(suites)}\n" \
                             f"Components: {fields.get('components', 'main')}\n"
                    if fields.get("signed-by"):
                        stanza += f"Signed-By: {fields['signed-by']}\n"
                    stanzas.append(stanza)
        else:
            for line in text.splitlines():
                parts = line.split("#", 1)[0].split()
                if len(parts) < 3 or parts[0] != "deb":
                    continue
                opts = []
                if parts[1].startswith("["):
                    while parts and not parts[1].endswith("]"):
                        opts.append(parts.pop(1))
                    opts.append(parts.pop(1))
                if len(parts) >= 3 and ours([parts[2]]):
                    stanzas.append(f"Types: deb\nURIs: {parts[1]}\nSuites: {parts[2]}\n"
                                   f"Components: {' '.join(parts[3:]) or 'main'}\n")
    return "\n".join(stanzas)


def base_images(dockerfile: Path) -> list[str]:
    """The ``debian:<suite>`` images a Dockerfile starts from (its FROM lines, in order, each once)."""
    found = re.findall(r"(?im)^FROM\s+(debian:[a-z]+)\b", dockerfile.read_text())
    return list(dict.fromkeys(found)) or [BASE_IMAGE]


def ensure_base_image(engine: Engine, lab, progress: Callable[[str], None] = print, image: str = BASE_IMAGE) -> str:
    """Makes sure ``image`` (``debian:<suite>``) exists (pull, else bootstrap + import); returns its id."""
    suite = image.split(":", 1)[1]
    if not engine.image_exists(image):
        progress(f"images: {image} is missing; trying to pull it")
        try:
            pulled = engine.run("pull", image, timeout=300).returncode == 0
        except subprocess.TimeoutExpired:
            pulled = False
        if not pulled:
            out = _build_dir(lab) / "images" / f"debian-{suite}-minbase.tar"
            if not out.exists():
                sources = out.with_suffix(".sources")
                out.parent.mkdir(parents=True, exist_ok=True)
                text = debian_sources(suite)
                if not text:
                    raise EngineError(f"no Debian {suite} entry in the host's apt sources to bootstrap from")
                sources.write_text(text)
                progress(f"images: no registry; bootstrapping {image} with mmdebstrap (a few minutes)")
                t0 = time.monotonic()
                tmp = out.with_name(out.stem + "-partial.tar")
                p = subprocess.run(["nice", str(lab.root / "dockerfiles" / "bootstrap-base.sh"), str(tmp),
                                    str(sources), suite], capture_output=True, text=True)
                if p.returncode != 0:
                    raise EngineError(f"bootstrap of {image} failed: {p.stderr.strip()[-800:]}")
                tmp.rename(out)
                progress(f"images: bootstrapped {image} in {time.monotonic() - t0:.0f} s")
            engine.run("import", "--change", 'CMD ["bash"]', "--change",
                       "LABEL org.cipherlab.bootstrap=mmdebstrap-minbase", str(out), image,
                       timeout=600, check=True)
    return engine.image_id(image) or ""


