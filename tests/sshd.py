"""Real SSH hosts for tests: sshd in network namespaces of this machine, each with its own address.

Each host is a namespace with a veth pair to the root namespace (10.231.N.1 here, 10.231.N.2 there, N from a
block no interface of this machine uses yet) and a real OpenSSH server on 10.231.N.2:22 with its own host key, accepting one test key.  ``down()``/``up()`` cut
and restore its link (a machine that stops answering).  Needs root, iproute2 and openssh-server."""

from __future__ import annotations

import os
import signal
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def available() -> str | None:
    """Why real SSH hosts cannot be made here (None: they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "ssh-keygen"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    if not Path("/usr/sbin/sshd").exists():
        return "openssh-server is not installed"
    probe = f"clprobe{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "cannot create network namespaces here"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def cleanup_stale() -> None:
    """Namespaces and links of earlier test processes that died without cleaning up (their pid is in the name)."""
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    for ns in names:
        if ns.startswith("clns") and "h" in ns[4:]:
            pid = ns[4:].split("h")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                for p in subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split():
                    subprocess.run(["kill", "-9", p], capture_output=True)
                subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.splitlines()
    for line in links:
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith("clh") and name[3:-1].isdigit() and not Path(f"/proc/{name[3:-1]}").exists():
            subprocess.run(["ip", "link", "del", name], capture_output=True)


def free_subnets(n: int) -> int:
    """The base B of n subnets 10.231.(B+1..B+n).0/24 that no interface here uses: two test sessions at once (CI
    beside a developer's run) would otherwise put the same address on two veths, and ssh would reach the other
    session's sshd (a host-key mismatch).  The search starts at a place of this process's own, so that two
    sessions starting together do not pick the same block."""
    out = subprocess.run(["ip", "-o", "-4", "addr"], capture_output=True, text=True).stdout
    used = {int(m) for m in re.findall(r"inet 10\.231\.(\d+)\.", out)}
    blocks = 250 // n
    first = os.getpid() % blocks
    for k in range(blocks):
        base = ((first + k) % blocks) * n
        if not used & set(range(base + 1, base + n + 1)):
            return base
    raise RuntimeError(f"no free block of {n} subnets under 10.231.0.0/16 (in use: {sorted(used)})")


def sh(*argv: str) -> None:
    subprocess.run(list(argv), check=True, capture_output=True)


@dataclass
class Host:
    name: str
    index: int
    ns: str
    address: str
    workdir: Path
    proc: subprocess.Popen
    host_key_pub: str

    @property
    def veth(self) -> str:
        return f"clh{os.getpid()}{self.index}"

    def down(self) -> None:
        sh("ip", "link", "set", self.veth, "down")

    def up(self) -> None:
        sh("ip", "link", "set", self.veth, "up")

    def _signal_all(self, sig: int) -> None:
        for pid in subprocess.run(["ip", "netns", "pids", self.ns], capture_output=True, text=True).stdout.split():
            try:
                os.kill(int(pid), sig)
            except ProcessLookupError:
                pass

    def freeze(self) -> None:
        """Every process of the host stops (SIGSTOP): the link stays up and TCP is acknowledged, SSH says nothing."""
        self._signal_all(signal.SIGSTOP)

    def thaw(self) -> None:
        self._signal_all(signal.SIGCONT)


class Hosts:
    def __init__(self, tmp: Path, n: int, target: str = "host"):
        cleanup_stale()
        self.tmp = tmp
        self.hosts: list[Host] = []
        self.key = tmp / "id_ed25519"
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key))
        (tmp / "authorized_keys").write_text(self.key.with_suffix(".pub").read_text())
        (tmp / "authorized_keys").chmod(0o600)
        Path("/run/sshd").mkdir(exist_ok=True)
        self.known_hosts = tmp / "known_hosts"
        self.subnet_base = free_subnets(n)
        self.hosts_dir = tmp / "hosts"
        self.hosts_dir.mkdir()
        lines = []
        try:
            for i in range(1, n + 1):
                lines.append(self._start(i))
                (self.hosts_dir / f"h{i}.yaml").write_text(
                    f"address: {self.hosts[-1].address}\nuser: root\nidentity_file: {self.key}\n"
                    f"target: {target}\nworkdir: {self.hosts[-1].workdir}\nknown_hosts: {self.known_hosts}\n")
        except Exception:
            self.close()
            raise
        self.known_lines = lines
        self.known_hosts.write_text("".join(lines))

    def _start(self, i: int) -> str:
        ns = f"clns{os.getpid()}h{i}"
        veth, peer = f"clh{os.getpid()}{i}", f"clp{os.getpid()}{i}"
        net = self.subnet_base + i
        here, there = f"10.231.{net}.1", f"10.231.{net}.2"
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
        sh("ip", "link", "set", peer, "netns", ns)
        sh("ip", "addr", "add", f"{here}/24", "dev", veth)
        sh("ip", "link", "set", veth, "up")
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{there}/24", "dev", peer)
        sh("ip", "netns", "exec", ns, "ip", "link", "set", peer, "up")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        key = self.tmp / f"h{i}_host_key"
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key))
        cfg = self.tmp / f"h{i}_sshd_config"
        cfg.write_text(f"ListenAddress {there}\nPort 22\nHostKey {key}\nAuthorizedKeysFile {self.tmp}/authorized_keys\n"
                       "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                       "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                       f"PidFile {self.tmp}/h{i}.pid\nMaxSessions 50\nMaxStartups 50\n")
        proc = subprocess.Popen(["ip", "netns", "exec", ns, "/usr/sbin/sshd", "-D", "-e", "-f", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=open(self.tmp / f"h{i}_sshd.log", "w"))
        workdir = self.tmp / f"h{i}-work"
        self.hosts.append(Host(f"h{i}", i, ns, there, workdir, proc, key.with_suffix(".pub").read_text()))
        for _ in range(100):  # wait until it listens
            if subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", f"ss -ltn | grep -q '{there}:22'"],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        kind, blob = key.with_suffix(".pub").read_text().split()[:2]
        return f"{there} {kind} {blob}\n"

    def close(self) -> None:
        for h in self.hosts:
            h.proc.terminate()
            try:
                h.proc.wait(5)
            except subprocess.TimeoutExpired:
                h.proc.kill()
            subprocess.run(["ip", "netns", "pids", h.ns], capture_output=True)
            pids = subprocess.run(["ip", "netns", "pids", h.ns], capture_output=True, text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "link", "del", h.veth], capture_output=True)
            subprocess.run(["ip", "netns", "del", h.ns], capture_output=True)
