"""The container backend: run commands inside the target's image.

One long-lived container per target (``run -d ... sleep infinity``, then
``exec`` per command: a cell runs about fifteen commands), removed when the
backend is closed or the process exits.  Each container has no network, runs
as an unprivileged user with all capabilities dropped and a read-only root
file system, has a pids limit and a memory limit (no swap) from the target's
``limits`` (lab.schema.ContainerLimits: 1024 processes, 4096 MiB unless the
target says otherwise), and sees three host folders at their own absolute
paths, so argv and cwd need no translation:

* the repository, read-only,
* the build directory (default ``<root>/build``), read-write: the only place
  a container writes to (besides a private /tmp),
* the shared folder (``lab.shared``, the known-answer vectors), read-only,
* the folder of any other input file a command needs (``prepare(inputs=...)``),
  read-only.

Built programs start through the image's runner entry point
(``/usr/local/bin/cipherlab-run``, dockerfiles/scripts/cipherlab-run).

When the lab runs as root, the container user (uid 10001) is given write
access to the build directory through POSIX ACLs (also inherited by folders
the host creates later); a non-root host user's own uid is used instead.

The limits hold for the container as a whole, so a runaway cell — a fork
bomb, a leak — ends there: the kernel refuses its forks (it runs into its
time limit: ``timeout``) or kills it (``crashed`` with SIGKILL), and the
machine and the other cells go on.  When a command fails, the container's
cgroup counters say whether a limit was reached, and its reason says so.
"""

from __future__ import annotations

import atexit
import os
import secrets
import struct
import subprocess
import threading
from pathlib import Path

from ..config import Lab, Target
from ..errors import Interrupted
from ..images import (LABEL_CONTENT, LABEL_REVISION, Engine, EngineError, build_images, detect_engine, image_labels,
                      image_ref)
from .base import TIMED_OUT, Backend, Completed
from .host import run_process
from ..qemu_plugin import PLUGIN_IN_IMAGE  # its home; named here for the backend's callers

CONTAINER_UID = 10001  # the image's "lab" user (dockerfiles/scripts/common.sh)
DEFAULT_TARGET = "x86_64"  # image used for commands of a target without one (e.g. "host")
KILL_GRACE = 5  # seconds between TERM and KILL for a command over its time
RUNNER_IN_IMAGE = "/usr/local/bin/cipherlab-run"
# the container's own cgroup counters, as seen inside it (v1 paths, then v2); missing ones are skipped
CGROUP_EVENTS = ("/sys/fs/cgroup/pids/pids.events", "/sys/fs/cgroup/memory/memory.oom_control",
                 "/sys/fs/cgroup/pids.events", "/sys/fs/cgroup/memory.events")


class ContainerBackend(Backend):
    name = "container"

    def __init__(self, lab: Lab, engine: Engine | str | None = None, build_dir: Path | None = None,
                 auto_build: bool = True, progress=print):
        super().__init__()
        self.lab = lab
        self.engine = engine if isinstance(engine, Engine) else \
            detect_engine(None if engine in (None, "auto") else engine, self.lab)
        self.build_dir = Path(build_dir or self.lab.root / "build").resolve()
        self.auto_build = auto_build
        self.progress = progress
        self._containers: dict[str, str] = {}  # target name -> container name
        self._limit_events: dict[str, tuple[int, int]] = {}  # container name -> (pids max, oom_kill) counts seen
        self._used: dict[str, dict] = {}  # target name -> image facts
        self._broken: dict[str, str] = {}  # target name -> why its container cannot start
        self._extra_mounts: set[Path] = set()  # folders of input files outside the repository
        uid = os.geteuid()
        self.uid, self.gid = (uid, os.getegid()) if uid != 0 else (CONTAINER_UID, CONTAINER_UID)
        self._access_granted = False
        self._lock = threading.Lock()  # builds run commands from several threads
        atexit.register(self.close)

    # ---------------------------------------------------------- containers
    def _mount_roots(self) -> list[tuple[Path, str]]:
        root = self.lab.root.resolve()
        mounts = [(root, "ro"), (self.build_dir, "rw")]
        shared = Path(self.lab.shared).resolve() if self.lab.shared else None
        if shared and shared.is_dir():
            mounts.append((shared, "ro"))
        mounts += [(d, "ro") for d in sorted(self._extra_mounts)]
        return mounts

    def _mounts(self) -> list[str]:
        return [a for d, mode in self._mount_roots() for a in ("-v", f"{d}:{d}:{mode}")]

    def _visible(self, path: Path) -> bool:
        path = path.resolve()
        return any(path == d or d in path.parents for d, _ in self._mount_roots())

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

    def prepare(self, targets: list[Target], inputs=()) -> None:
        """Builds missing images (auto_build) and mounts the folders of input files outside the
        repository read-only (containers started before are restarted with the new mounts)."""
        new = {Path(p).resolve().parent for p in inputs if not self._visible(Path(p))}
        if new:
            self._extra_mounts |= new
            self.close()
        if self.auto_build:
            names = sorted({self._image_for(t).name for t in targets})
            try:
                build_images(self.lab, names, self.engine, self.progress)
            except EngineError as e:
                for n in names:
                    self._broken[n] = f"container for {n} unavailable: {e}"

    def _start(self, t: Target) -> str:
        if not self.engine.image_exists(image_ref(t)):
            raise EngineError(f"image {image_ref(t)} is not built: invoke images.build --targets {t.name}")
        self.build_dir.mkdir(parents=True, exist_ok=True)
        if self.uid == CONTAINER_UID and not self._access_granted:
            grant_write_access(self.build_dir, self.uid)
            self._access_granted = True
        name = f"cipherlab-{t.name}-{os.getpid()}-{secrets.token_hex(3)}"
        limits = t.limits
        args = ["run", "-d", "--rm", "--name", name, "--network=none", "--user", f"{self.uid}:{self.gid}",
                "--cap-drop=ALL", "--security-opt=no-new-privileges", "--read-only",
                "--pids-limit", str(limits.pids), "--memory", f"{limits.memory_mib}m",
                "--memory-swap", f"{limits.memory_mib}m",
                "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=2g", "-e", "HOME=/tmp", "-e", "TMPDIR=/tmp",
                "--label", f"org.cipherlab.owner-pid={os.getpid()}", *self._mounts()]
        if self.engine.name == "docker":
            args.append("--init")  # reaps what a killed command leaves behind
        self.engine.run(*args, image_ref(t), "sleep", "infinity", timeout=120, check=True)
        self._containers[t.name] = name
        self._limit_events[name] = (0, 0)
        self._used[t.name] = {**self.image_info(t), "limits": limits.model_dump()}
        return name

    def _limit_reached(self, t: Target, name: str) -> str | None:
        """Which of the container's limits were reached since the last look (cgroup v1 or v2 counters:
        pids 'max' events, memory 'oom_kill' events), as a phrase for a failed command's reason."""
        c = self.engine.run("exec", name, "cat", *CGROUP_EVENTS, timeout=30)
        seen = {}
        for line in c.stdout.splitlines():
            key, _, value = line.partition(" ")
            if key in ("max", "oom_kill") and value.strip().isdigit():
                seen[key] = max(seen.get(key, 0), int(value))
        pids, ooms = seen.get("max", 0), seen.get("oom_kill", 0)
        before = self._limit_events.get(name, (0, 0))
        self._limit_events[name] = (pids, ooms)
        limits = t.limits
        hit = ([f"the container's memory limit ({limits.memory_mib} MiB) was reached: the kernel killed a process"]
               if ooms > before[1] else []) + \
              ([f"the container's pids limit ({limits.pids}) was reached: forks were refused"]
               if pids > before[0] else [])
        return "; ".join(hit) or None

    def _container(self, t: Target) -> str:
        with self._lock:
            return self._running_container(t)

    def _running_container(self, t: Target) -> str:
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

    # ----------------------------------------------------------- protocol
    def exec(self, argv: list[str], *, target: Target, timeout: float, env: dict | None = None) -> Completed:
        t = self._image_for(target)
        if t.name in self._broken:
            return Completed(list(argv), 125, "", self._broken[t.name], 0.0)
        try:
            name = self._container(t)
        except (EngineError, subprocess.TimeoutExpired) as e:  # no image / engine down: every command fails
            self._broken[t.name] = f"container for {t.name} unavailable: {e}"
            return Completed(list(argv), 125, "", self._broken[t.name], 0.0)
        envargs = [a for k, v in (env or {}).items() for a in ("-e", f"{k}={v}")]
        # The command's time limit is enforced inside the container (killing the
        # exec client would leave the command running there).
        cmd = self.engine.argv("exec", "-w", str(self.lab.root.resolve()), *envargs, name,
                               "timeout", "-k", str(KILL_GRACE), f"{timeout:g}", *argv)
        try:
            c = run_process(cmd, cwd=self.lab.root, timeout=timeout + KILL_GRACE + 60,
                            env=self.engine.env, cancel=self.cancel)
        except Interrupted:
            self._kill(t.name)  # stops what the command started inside
            raise
        c.argv = list(argv)
        if c.timed_out:  # the engine itself hung: start afresh next time
            self._kill(t.name)
            return c
        if c.returncode == TIMED_OUT or (c.returncode == 128 + 9 and c.seconds >= timeout):
            c.returncode, c.timed_out = None, True
        if c.timed_out or c.crashed:
            c.note = self._limit_reached(t, name)
        return c

    def runner(self) -> str:
        return RUNNER_IN_IMAGE

    def plugin_path(self, target: Target | None = None) -> str | None:
        """The plugin in target's image; None for an image without one (targets/<name>.yaml image_plugin)."""
        return PLUGIN_IN_IMAGE if self._image_for(target).image_plugin else None

    def describe(self) -> dict:
        return {"backend": "container", "engine": self.engine.name, "engine_version": self.engine.version(),
                "network": "none", "user": f"{self.uid}:{self.gid}", "images": dict(self._used)}


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
