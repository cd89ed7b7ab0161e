"""Compiler versions (toolchains/versions.yaml): where each is found, its exact ``--version``, installing it.

* :func:`where_found` — every (version, target) place with the first line of ``--version`` there: on the host
  the compiler itself, in an image one container run per image (cached by image id), or why there is none
  ("not installed", "image not built");
* :func:`resolve` — versions named by version (``gcc-11``), profile (``gcc-11-O3``) or glob (``clang-1*``);
* :func:`install_plan` / :func:`install` — the Debian packages to apt-get on the host and the images to build
  for those found only in images.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable

from .buildplan import compiler
from .config import Lab, Target
from .errors import UsageError, UserError
from .schema import CompilerVersion


@dataclass(frozen=True)
class Place:
    """One compiler version on one target: its executable there and what ``--version`` said (or why not)."""

    version: CompilerVersion
    target: Target
    executable: str
    version_line: str | None  # first line of --version; None when it cannot be run here
    note: str = ""            # why there is no version line

    @property
    def where(self) -> str:
        return f"{self.target.name} (image {self.target.image})" if self.target.image else self.target.name


def executable(lab: Lab, cv: CompilerVersion, target: Target) -> str:
    """The compiler's executable for a target (cross prefix for gcc), as the build plan calls it."""
    return compiler(lab.toolchain(profiles_of(lab, cv)[0]), target)


def profiles_of(lab: Lab, cv: CompilerVersion) -> list[str]:
    return [n for n in lab.toolchain_names() if (v := lab.version_of(n)) is not None and v.name == cv.name]


def first_line(argv: list[str], timeout: float = 60) -> str | None:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = p.stdout.strip().splitlines()
    return lines[0].strip() if p.returncode == 0 and lines else None


def package_installed(package: str) -> bool:
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return p.returncode == 0 and "install ok installed" in p.stdout


def _running_engine(lab: Lab):
    """The container engine if one answers now (listing never starts a daemon), else None."""
    from .images.engine import Engine, _docker_responds, detect_engine

    docker = shutil.which("docker")
    if os.environ.get("CIPHERLAB_ENGINE", "docker") == "docker" and docker and _docker_responds(docker):
        return Engine("docker", docker)
    if shutil.which("podman"):
        try:
            return detect_engine("podman", lab, explicit=True)
        except UserError:
            return None
    return None


def _image_versions(lab: Lab, engine, target: Target, exes: list[str]) -> dict[str, str | None]:
    """``--version`` first lines of exes in the target's image: one container run, cached by image id."""
    from .images import image_ref

    ref = image_ref(target)
    image_id = engine.image_id(ref)
    if not image_id:
        return {}
    cache = lab.root / "build" / "images" / f"compilers-{image_id.split(':')[-1][:16]}.json"
    known: dict = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [e for e in exes if e not in known]
    if todo:
        script = "; ".join(f"printf '%s\\t' {shlex.quote(e)}; ({shlex.quote(e)} --version 2>/dev/null || echo) "
                           f"| head -n 1" for e in todo)
        p = engine.run("run", "--rm", "--network=none", ref, "sh", "-c", script, timeout=120)
        for line in p.stdout.splitlines():
            exe, _, first = line.partition("\t")
            if exe in todo:
                known[exe] = first.strip() or None
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known, indent=1, sort_keys=True))
    return {e: known.get(e) for e in exes}


def where_found(lab: Lab, versions: list[CompilerVersion] | None = None) -> list[Place]:
    """Every place each version is found, with its --version line there (or why there is none)."""
    versions = list(lab.compiler_versions.values()) if versions is None else versions
    places = [(cv, lab.target(t)) for cv in versions for t in cv.found]
    imaged = {t.name: t for _, t in places if t.image}
    engine = _running_engine(lab) if imaged else None
    in_images: dict[str, dict[str, str | None]] = {}
    for name, t in imaged.items():
        exes = sorted({executable(lab, cv, t) for cv, tt in places if tt.name == name})
        in_images[name] = _image_versions(lab, engine, t, exes) if engine else {}
    out = []
    for cv, t in places:
        exe = executable(lab, cv, t)
        if not t.image:
            line = first_line([exe, "--version"])
            note = "" if line else f"not installed (./cipherlab compilers.install {cv.name}: apt-get install " \
                                   f"{cv.package or cv.executable})"
        elif engine is None:
            line, note = None, "no container engine answers (the image cannot be asked)"
        elif not in_images[t.name]:
            line, note = None, f"image not built (built when a cell needs it; invoke images.build --targets {t.name})"
        else:
            line = in_images[t.name].get(exe)
            note = "" if line else f"{exe} is not in the image (rebuild it: invoke images.build --targets {t.name})"
        out.append(Place(cv, t, exe, line, note))
    return out


def resolve(lab: Lab, names: list[str]) -> list[CompilerVersion]:
    """Compiler versions named by version (gcc-11), profile (gcc-11-O3) or glob of either; each once."""
    out: list[CompilerVersion] = []
    for name in names:
        hits = [cv for cv in lab.compiler_versions.values() if fnmatch.fnmatchcase(cv.name, name)]
        hits += [v for n in lab.toolchain_names() if fnmatch.fnmatchcase(n, name) and (v := lab.version_of(n))]
        if not hits:
            known = ", ".join(lab.compiler_versions)
            if name in lab.toolchains:
                raise UsageError(f"toolchain '{name}' is a profile file, not a compiler version of "
                                 f"toolchains/versions.yaml ({known})")
            raise UsageError(f"'{name}' names no compiler version of toolchains/versions.yaml (versions: {known}; "
                             "profiles such as gcc-11-O3 and globs such as 'clang-1*' work too)")
        for cv in hits:
            if cv not in out:
                out.append(cv)
    return out


@dataclass
class InstallPlan:
    packages: list[str]          # to apt-get install on the host
    present: list[str]           # already installed
    images: list[str]            # targets whose image provides the versions the host cannot have
    apt_command: list[str]


def install_plan(lab: Lab, versions: list[CompilerVersion]) -> InstallPlan:
    packages, present, images = [], [], []
    for cv in versions:
        pkg = cv.package or cv.executable
        if "host" in cv.found:
            (present if package_installed(pkg) else packages).append(pkg)
        else:
            images += [t for t in cv.found if lab.target(t).image and t not in images]
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    cmd = [*sudo, "apt-get", "install", "-y", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=600",
           *packages]
    return InstallPlan(packages, present, images, cmd)


def install(lab: Lab, versions: list[CompilerVersion], *, dry_run: bool = False, images: bool = True,
            say: Callable[[str], None] = print) -> InstallPlan:
    """apt-get installs the host's missing packages; builds the images of versions found only in images."""
    plan = install_plan(lab, versions)
    for pkg in plan.present:
        say(f"{pkg}: already installed")
    if plan.packages:
        say(("would run: " if dry_run else "running: ") + " ".join(plan.apt_command))
        if not dry_run:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            p = subprocess.run(plan.apt_command, env=env)
            if p.returncode != 0:
                raise UsageError(f"apt-get install {' '.join(plan.packages)} failed (exit {p.returncode}); "
                                 "run `apt-get update` first if the package is not found")
    if plan.images:
        say(("would build" if dry_run or not images else "building") + " the images of "
            + ", ".join(plan.images) + " (these versions are not packaged for the host's Debian)")
        if images and not dry_run:
            from .images import build_images

            build_images(lab, plan.images, None, say)
    return plan


def package_build(backend, exe: str, target: Target) -> str:
    """The Debian package and version that installed exe where the target's programs are built, e.g.
    'clang-14 1:14.0.6-12' (clang's --version line omits Debian's revision); '' when unknown."""
    script = ('f=$(readlink -f "$(command -v "$1")") && p=$(dpkg -S "$f" 2>/dev/null | head -n 1 | cut -d: -f1) '
              '&& dpkg-query -W -f=\'${Package} ${Version}\' "$p"')
    c = backend.exec(["sh", "-c", script, "package-build", exe], target=target, timeout=60)
    return c.stdout.strip() if c.ok else ""
