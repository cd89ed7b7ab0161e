"""The container backend: run commands inside the target's image.

One long-lived container per target (``run -d ... sleep infinity``, then
``exec`` per command: a cell runs about fifteen commands), removed when the
backend is closed or the process exits.  Each container has no network, runs
as an unprivileged user with all capabilities dropped and a read-only root
file system, and sees three host folders at their own absolute paths, so
argv and cwd need no translation:

* the repository, read-only,
* the build directory (default ``<root>/build``), read-write: the only place
  a container writes to (besides a private /tmp),
* the shared folder (``lab.shared``, the known-answer vectors), read-only.

When the lab runs as root, the container user (uid 10001) is given write
access to the build directory through POSIX ACLs (also inherited by folders
the host creates later); a non-root host user's own uid is used instead.
"""

from __future__ import annotations

import atexit
import os
import secrets
import struct
import subprocess
import time
from pathlib import Path

from ..config import Lab, Target
from ..images import (LABEL_CONTENT, LABEL_REVISION, Engine, EngineError, build_images, detect_engine, image_labels,
                      image_ref)
from . import Completed

CONTAINER_UID = 10001  # the image's "lab" user (dockerfiles/scripts/common.sh)
DEFAULT_TARGET = "x86_64"  # image used for commands of a target without one (e.g. "host")
TIMED_OUT = 124  # coreutils timeout's status when it had to stop the command
KILL_GRACE = 5  # seconds between TERM and KILL for a command over its time


class ContainerBackend:
    name = "container"

    def __init__(self, lab: Lab | None = None, engine: Engine | str | None = None, build_dir: Path | None = None,
                 targets: list[str] | None = None, auto_build: bool = True, progress=print):
        self.lab = lab or Lab()
        self.engine = engine if isinstance(engine, Engine) else \
            detect_engine(None if engine in (None, "auto") else engine, self.lab)
        self.build_dir = Path(build_dir or self.lab.root / "build").resolve()
        self.targets = list(targets or [])
        self.auto_build = auto_build
        self.progress = progress
        self._containers: dict[str, str] = {}  # target name -> container name
        self._used: dict[str, dict] = {}  # target name -> image facts
        self._versions: dict[tuple[str, str], str] = {}
        self._broken: dict[str, str] = {}  # target name -> why its container cannot start
        uid = os.geteuid()
        self.uid, self.gid = (uid, os.getegid()) if uid != 0 else (CONTAINER_UID, CONTAINER_UID)
        self._access_granted = False
        atexit.register(self.close)

    # ---------------------------------------------------------- containers
    def _mounts(self) -> list[str]:
        root = self.lab.root.resolve()
        mounts = [f"{root}:{root}:ro", f"{self.build_dir}:{self.build_dir}:rw"]
        shared = Path(self.lab.shared).resolve() if self.lab.shared else None
        if shared and shared.is_dir():
            mounts.append(f"{shared}:{shared}:ro")
        return [a for m in mounts for a in ("-v", m)]

    def _image_for(self, target: Target | None) -> Target:
        if target is not None and target.image:
            return target
        return self.lab.target(DEFAULT_TARGET)

    def image_info(self, target: Target) -> dict:
        """The image a target's commands run in: reference, id, revision and content-hash labels."""
        t = self._image_for(target)
        labels = image_labels(t, self.engine)
        return {"image": image_ref(t), "id": self.engine.image_id(image_ref(t)),
                "revision": labels.get(LABEL_REVISION), "content_hash": labels.get(LABEL_CONTENT)}

    def image_id(self, target: Target) -> str | None:
        return self.image_info(target)["id"]

    def _start(self, t: Target) -> str:
        if self.auto_build:
            build_images(self.lab, [t.name], self.engine, self.progress)
        elif not self.engine.image_exists(image_ref(t)):
            raise EngineError(f"image {image_ref(t)} is not built: invoke images.build --targets {t.name}")
        self.build_dir.mkdir(parents=True, exist_ok=True)
        if self.uid == CONTAINER_UID and not self._access_granted:
            grant_write_access(self.build_dir, self.uid)
            self._access_granted = True
        name = f"cipherlab-{t.name}-{os.getpid()}-{secrets.token_hex(3)}"
        args = ["run", "-d", "--rm", "--name", name, "--network=none", "--user", f"{self.uid}:{self.gid}",
                "--cap-drop=ALL", "--security-opt=no-new-privileges", "--read-only",
                "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=2g", "-e", "HOME=/tmp", "-e", "TMPDIR=/tmp",
                "--label", f"org.cipherlab.owner-pid={os.getpid()}", *self._mounts()]
        if self.engine.name == "docker":
            args.append("--init")  # reaps what a killed command leaves behind
        self.engine.run(*args, image_ref(t), "sleep", "infinity", timeout=120, check=True)
        self._containers[t.name] = name
        self._used[t.name] = self.image_info(t)
        return name

    def _container(self, t: Target) -> str:
        name = self._containers.get(t.name)
        if name:
            state = self.engine.run("inspect", "--format", "{{.State.Running}}", name, timeout=30)
            if state.returncode == 0 and state.stdout.strip() == "true":
                return name
            self._containers.pop(t.name, None)
        return self._start(t)

    def _kill(self, target_name: str) -> None:
        name = self._containers.pop(target_name, None)
        if name:
            try:
                self.engine.run("rm", "-f", name, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass

    def close(self) -> None:
        """Removes this backend's containers (also called at exit)."""
        for t in list(self._containers):
            self._kill(t)

    def __enter__(self) -> "ContainerBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------- protocol
    def run(self, argv: list[str], *, cwd: str, timeout: float, env: dict | None = None,
            target: Target | None = None) -> Completed:
        t0 = time.perf_counter()
        t = self._image_for(target)
        if t.name in self._broken:
            return Completed(argv, 125, "", self._broken[t.name], 0.0)
        try:
            name = self._container(t)
        except (EngineError, subprocess.TimeoutExpired) as e:  # no image / engine down: every command fails
            self._broken[t.name] = f"container for {t.name} unavailable: {e}"
            return Completed(argv, 125, "", self._broken[t.name], time.perf_counter() - t0)
        envargs = [a for k, v in (env or {}).items() for a in ("-e", f"{k}={v}")]
        # The command's time limit is enforced inside the container (killing the
        # exec client would leave the command running there).
        cmd = self.engine.argv("exec", "-w", str(cwd), *envargs, name,
                               "timeout", "-k", str(KILL_GRACE), f"{timeout:g}", *argv)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env={**os.environ,
                               **self.engine.env}, timeout=timeout + KILL_GRACE + 60)
        except subprocess.TimeoutExpired as e:  # the engine itself hung: start afresh next time
            self._kill(t.name)
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            return Completed(argv, None, out, err, time.perf_counter() - t0, timed_out=True)
        except FileNotFoundError as e:
            return Completed(argv, 127, "", str(e), time.perf_counter() - t0)
        seconds = time.perf_counter() - t0
        if p.returncode == TIMED_OUT or (p.returncode == 128 + 9 and seconds >= timeout):
            return Completed(argv, None, p.stdout, p.stderr, seconds, timed_out=True)
        return Completed(argv, p.returncode, p.stdout, p.stderr, seconds)

    def compiler_version(self, cc: str, target: Target | None = None) -> str:
        """First line of ``cc --version`` inside the target's image (what built the cell)."""
        t = self._image_for(target)
        key = (t.name, cc)
        if key not in self._versions:
            c = self.run([cc, "--version"], cwd=str(self.lab.root), timeout=60, target=t)
            lines = c.stdout.strip().splitlines()
            self._versions[key] = lines[0].strip() if c.returncode == 0 and lines else "unavailable"
        return self._versions[key]

    def describe(self) -> dict:
        images = dict(self._used)
        for name in self.targets:
            t = self._image_for(self.lab.target(name))
            if t.name not in images:
                images[t.name] = self.image_info(t)
        return {"backend": "container", "engine": self.engine.name, "engine_version": self.engine.version(),
                "network": "none", "user": f"{self.uid}:{self.gid}", "images": images}


# ------------------------------------------------------------ build access
ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
ACL_UNDEFINED_ID = 0xFFFFFFFF


def _acl(mode: int, uid: int, user_perm: int) -> bytes:
    """A POSIX ACL in the kernel's xattr format: the mode's owner/group/other plus rw(x) for uid."""
    group = (mode >> 3) & 7
    entries = [(ACL_USER_OBJ, (mode >> 6) & 7, ACL_UNDEFINED_ID), (ACL_USER, user_perm, uid),
               (ACL_GROUP_OBJ, group, ACL_UNDEFINED_ID), (ACL_MASK, group | user_perm, ACL_UNDEFINED_ID),
               (ACL_OTHER, mode & 7, ACL_UNDEFINED_ID)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def grant_write_access(folder: Path, uid: int) -> None:
    """Lets ``uid`` write everywhere under folder, now and in folders created later (POSIX ACLs).

    Entries that cannot take an ACL (other file systems mounted below, read-only
    ones) are left alone; only the folder itself must accept it.
    """
    def grant(path: str, is_dir: bool) -> None:
        mode = os.lstat(path).st_mode
        if is_dir:
            os.setxattr(path, "system.posix_acl_access", _acl(mode, uid, 7))
            os.setxattr(path, "system.posix_acl_default", _acl(0o755, uid, 7))
        else:
            os.setxattr(path, "system.posix_acl_access", _acl(mode, uid, 6 | (1 if mode & 0o100 else 0)))

    try:
        grant(str(folder), True)
    except OSError as e:
        raise EngineError(f"cannot give the container user (uid {uid}) write access to {folder} with a POSIX "
                          f"ACL ({e}). Fix: use a file system with ACLs, or run the lab as a non-root user") from e
    device = os.stat(folder).st_dev
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(here, d))
                   and os.lstat(os.path.join(here, d)).st_dev == device]
        for name, is_dir in [(d, True) for d in dirs] + [(f, False) for f in files]:
            path = os.path.join(here, name)
            if not os.path.islink(path):
                try:
                    grant(path, is_dir)
                except OSError:
                    pass
